// A password for `jumpgate accounts create`: the first line of standard input
// (--password-stdin, for scripts), or asked twice on the terminal without echo.

import { UsageError } from './usage-error.js';

/** Standard input as the prompt reads it (process.stdin; a stream in tests). */
export type PasswordSource = NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };

/** Refused input: exit status 1. */
export class PasswordError extends Error {}

/** Stdin up to EOF, at most 64 KiB: its first line, without the line end. */
async function firstLine(source: PasswordSource): Promise<string> {
  let text = '';
  for await (const chunk of source) {
    text += typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('utf8');
    if (text.length > 65536) break;
  }
  const line = text.split(/\r?\n/)[0] ?? '';
  if (line === '') throw new PasswordError('no password on standard input (--password-stdin reads its first line)');
  return line;
}

/** One line typed on the terminal, not echoed; Ctrl-C or Ctrl-D stops. */
function typed(source: PasswordSource, prompt: string): Promise<string> {
  process.stderr.write(prompt);
  source.setRawMode!(true);
  source.resume();
  return new Promise((resolve, reject) => {
    let text = '';
    const done = (err: Error | null): void => {
      source.off('data', onData);
      source.setRawMode!(false);
      source.pause();
      process.stderr.write('\n');
      if (err === null) resolve(text);
      else reject(err);
    };
    const onData = (chunk: Buffer | string): void => {
      for (const ch of chunk.toString()) {
        if (ch === '\r' || ch === '\n') return done(null);
        if (ch === '\u0003' || ch === '\u0004') return done(new PasswordError('no password given'));
        if (ch === '\u007f' || ch === '\b') text = text.slice(0, -1);
        else text += ch;
      }
    };
    source.on('data', onData);
  });
}

/** The password, from stdin (`fromStdin`) or the terminal (typed twice). */
export async function readPassword(source: PasswordSource, fromStdin: boolean): Promise<string> {
  if (fromStdin) return firstLine(source);
  if (source.isTTY !== true || source.setRawMode === undefined)
    throw new UsageError('standard input is not a terminal to ask for the password: pass --password-stdin and write it there');
  const first = await typed(source, 'password: ');
  const again = await typed(source, 'password again: ');
  if (first !== again) throw new PasswordError('the two passwords differ');
  return first;
}
