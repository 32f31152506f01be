// A command line the CLI cannot run (unknown command, bad flag or argument): each command
// answers it with its usage text and exit status 2, unlike a failure while running.

import { parseArgs, type ParseArgsConfig } from 'node:util';

export class UsageError extends Error {}

type Flags = NonNullable<ParseArgsConfig['options']>;

/** A command's flags (strict: an unknown or malformed one is a UsageError with node's first line). */
export function parseFlags<O extends Flags>(
  argv: string[],
  options: O,
): ReturnType<typeof parseArgs<{ args: string[]; strict: true; allowPositionals: false; options: O }>> {
  try {
    return parseArgs({ args: argv, strict: true, allowPositionals: false, options });
  } catch (e) {
    throw new UsageError((e as Error).message.split('\n')[0]!);
  }
}

/** A numeric flag's value: `text` as a number (an integer when `integer`) from `min` to `max`; a UsageError naming the flag otherwise. */
export function numberFlag(flag: string, text: string, integer: boolean, min: number, max: number): number {
  const v = Number(text);
  if (text.trim() === '' || !Number.isFinite(v) || (integer && !Number.isInteger(v)) || v < min || v > max) {
    throw new UsageError(`--${flag} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}, got "${text}"`);
  }
  return v;
}
