// One request of the HTTP load (http-load.ts): the body every request sends, and the undici
// dispatch handler that follows one request to its answer. The handler never parses the
// answer: it counts bytes and scans the body for a JSON-RPC error member, so the generator
// stays cheaper than what it measures.

const ERROR_MEMBER = Buffer.from('"error":');
const CODE_MEMBER = Buffer.from('"code":');

/** Builds the body once: one call, or a batch of `batch` calls with ids 1..batch. */
export function requestBody(method: string, params: string | null, batch: number): Buffer {
  const call = (id: number): string => `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)}${params === null ? '' : `,"params":${params}`}}`;
  if (batch === 0) return Buffer.from(call(1));
  const parts: string[] = [];
  for (let i = 1; i <= batch; i++) parts.push(call(i));
  return Buffer.from('[' + parts.join(',') + ']');
}

/** The JSON-RPC error code after an `"error":` member at `at`, as text ('' if not found). */
function codeAfter(chunk: Buffer, at: number): string {
  const c = chunk.indexOf(CODE_MEMBER, at);
  if (c < 0 || c > at + 64) return '';
  let i = c + CODE_MEMBER.length;
  while (chunk[i] === 0x20) i++;
  const start = i;
  if (chunk[i] === 0x2d) i++;
  while (i < chunk.length && chunk[i]! >= 0x30 && chunk[i]! <= 0x39) i++;
  return chunk.toString('latin1', start, i);
}

/** The error kind of a request that got no HTTP answer: "timeout" or "socket <code>". */
export function socketErrorKind(err: Error & { code?: string }): string {
  const code = err.code ?? '';
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') return 'timeout';
  if (code === 'UND_ERR_SOCKET') {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    return 'socket ' + (cause ?? 'closed');
  }
  return 'socket ' + (code || err.name);
}

/** Where a request reports its end: the run that sent it. */
export interface RequestOwner {
  complete(req: LoadRequest): void;
  fail(req: LoadRequest, err: Error): void;
}

/** One request in flight. Every field is set here so all requests share one shape. */
export class LoadRequest {
  status = 0;
  bytes = 0;
  /** Error kind found in the body ('' = none yet). */
  rpcError = '';
  /** Last bytes of the previous chunk, so a member split across chunks is still found. */
  tail: Buffer | null = null;
  constructor(
    readonly run: RequestOwner,
    /** Intended send time (open loop) or the send time (closed loop), ms. */
    readonly intended: number,
    /** When undici hands the request to a socket (set again in onConnect). */
    public sentAt: number,
    readonly measured: boolean,
  ) {}

  /** Called as the request is written to a connection: the actual send. */
  onConnect(): void {
    this.sentAt = performance.now();
  }

  onHeaders(status: number): boolean {
    // 1xx informational answers come before the real one.
    if (status >= 200) this.status = status;
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.bytes += chunk.length;
    if (this.rpcError !== '' || this.status >= 300) return true;
    const at = chunk.indexOf(ERROR_MEMBER);
    if (at >= 0) {
      // The code may sit in the next chunk: "?" then.
      this.rpcError = 'JSON-RPC ' + (codeAfter(chunk, at) || '?');
      return true;
    }
    if (this.tail !== null) {
      const joined = Buffer.concat([this.tail, chunk.subarray(0, 80)]);
      const j = joined.indexOf(ERROR_MEMBER);
      if (j >= 0) {
        this.rpcError = 'JSON-RPC ' + (codeAfter(joined, j) || '?');
        return true;
      }
    }
    this.tail = chunk.length >= 8 ? chunk.subarray(chunk.length - 8) : null;
    return true;
  }

  onComplete(): void {
    this.run.complete(this);
  }

  onError(err: Error): void {
    this.run.fail(this, err);
  }
}
