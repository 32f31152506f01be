// The builders of the config schema's checks (schema.ts and its parts): each check's error
// text is the "expected …" half of a message; load.ts adds the field path and what was found.

import { z } from 'zod';

export const expected = (what: string) => ({ error: `expected ${what}` });
export const COMMITMENTS = ['processed', 'confirmed', 'finalized'] as const;

export function int(min: number, max?: number) {
  const e = expected(max === undefined ? `an integer >= ${min}` : `an integer from ${min} to ${max}`);
  const n = z.number(e).int(e).min(min, e);
  return max === undefined ? n : n.max(max, e);
}

export const port = (what: string) => int(0, 65535).meta({ description: what });

/** A string; `re` also lands in the JSON Schema as `pattern`, `test` (a refinement) does not. */
export function str(what: string, re?: RegExp, test?: (s: string) => boolean) {
  const e = expected(what);
  const s = re === undefined ? z.string(e) : z.string(e).regex(re, e);
  return test === undefined ? s : s.refine(test, e);
}

export const strList = (what: string) => z.array(str(what), expected(`a list of ${what}s`));

export function obj<S extends z.core.$ZodLooseShape>(shape: S, description?: string) {
  const o = z.strictObject(shape, expected('a mapping'));
  return description === undefined ? o : o.meta({ description });
}

export function urlWith(protocols: readonly string[]) {
  return (s: string): boolean => {
    let u: URL;
    try {
      u = new URL(s);
    } catch {
      return false;
    }
    return protocols.includes(u.protocol) && u.hostname !== '';
  };
}

const METHOD_RE = /^[A-Za-z0-9_.:-]{1,128}$/;

export const method = str('a JSON-RPC method name', METHOD_RE);
export const methodList = z.array(method, expected('a list of JSON-RPC method names'));

export const positive = (what: string) => z.number(expected(`${what} > 0`)).gt(0, expected(`${what} > 0`));
