// JSON-RPC 2.0 envelope: validate with JSON.parse, but take each id's bytes from the raw
// body so ids such as 12345678901234567890 are echoed exactly.

import { arrayElements, ID_KEY, memberSpan, trimmedSpan } from '../../rpc/scan.js';

/** Runs one call and returns its fragment ('"result":…' or '"error":{…}'). */
export type Exec = (method: string, params: unknown) => string;

const HEAD = '{"jsonrpc":"2.0",';
export const PARSE_ERROR = '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}';
const INVALID_REQUEST = '"error":{"code":-32600,"message":"Invalid Request"}';
const INVALID_NULL_ID = HEAD + INVALID_REQUEST + ',"id":null}';

interface Request {
  jsonrpc?: unknown;
  method?: unknown;
  params?: unknown;
  id?: unknown;
}

const idSpan = new Int32Array(2);

/** One call's response object, or '' for a notification. */
function answerOne(v: unknown, body: Buffer, s: number, e: number, exec: Exec): string {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return INVALID_NULL_ID;
  const req = v as Request;
  const id = req.id;
  if (id !== undefined && id !== null && typeof id !== 'string' && typeof id !== 'number') return INVALID_NULL_ID;
  const hasId = memberSpan(body, s, e, ID_KEY, idSpan);
  const rawId = hasId ? body.toString('utf8', idSpan[0], idSpan[1]) : 'null';
  if (req.jsonrpc !== '2.0' || typeof req.method !== 'string') return HEAD + INVALID_REQUEST + ',"id":' + rawId + '}';
  const fragment = exec(req.method, req.params);
  return hasId ? HEAD + fragment + ',"id":' + rawId + '}' : '';
}

/**
 * The response body for a request body ('' when every call was a notification); `calls`
 * receives the number of calls, batch elements included.
 */
export function respond(body: Buffer, exec: Exec, stats: { calls: number }): string {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return PARSE_ERROR;
  }
  const [s, e] = trimmedSpan(body);
  if (!Array.isArray(value)) {
    stats.calls++;
    return answerOne(value, body, s, e, exec);
  }
  if (value.length === 0) return INVALID_NULL_ID;
  stats.calls += value.length;
  const spans: number[] = [];
  arrayElements(body, s, e, spans);
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const part = answerOne(value[i], body, spans[2 * i]!, spans[2 * i + 1]!, exec);
    if (part !== '') out += (out === '' ? '[' : ',') + part;
  }
  return out === '' ? '' : out + ']';
}
