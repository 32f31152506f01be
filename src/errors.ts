// Every error the gateway itself produces. Callers match on `code`; docs/errors.md's error
// table is checked against this list by test/unit/errors-documented.test.ts.

export interface GatewayErrorSpec {
  readonly code: number;
  readonly http: number;
  readonly message: string;
}

function spec(code: number, http: number, message: string): GatewayErrorSpec {
  return { code, http, message };
}

export const Errors = {
  unauthorized: spec(7401, 401, 'Missing or unknown API token'),
  forbidden: spec(7403, 403, 'API token is inactive or its stack is disabled'),
  notFound: spec(7404, 404, 'Not found'),
  methodNotAllowed: spec(7405, 405, 'Method not allowed'),
  bodyTooLarge: spec(7413, 413, 'Request body too large'),
  unsupportedMediaType: spec(7415, 415, 'Content-Type must be application/json'),
  rateLimited: spec(7429, 429, 'Rate limit exceeded'),
  badHeaders: spec(7700, 400, 'Invalid request headers'),
  badHttp: spec(7400, 400, 'Malformed HTTP request'),
  headTooLarge: spec(7431, 431, 'Request line and headers too large'),
  requestTimeout: spec(7408, 408, 'Request not received in time'),
  batchTooLarge: spec(7701, 413, 'Batch too large'),
  duplicateSubscription: spec(7702, 200, 'Duplicate subscription on this connection'),
  subscriptionLimit: spec(7703, 200, 'Subscription limit per connection reached'),
  upstreamFailed: spec(7502, 502, 'Node failed and no retry could succeed'),
  noNode: spec(7503, 503, 'No node available'),
  upstreamTimeout: spec(7504, 504, 'Node timed out'),
  answerTooLarge: spec(7506, 502, 'Node answer too large to buffer'),
  notCaughtUp: spec(7505, 503, 'No node has caught up with the slot this key has seen'),
  feesUnavailable: spec(7507, 503, 'No recent block held for a priority fee estimate yet'),
} as const;

export type ErrorName = keyof typeof Errors;

// JSON-RPC 2.0's own codes, answered by the gateway for malformed input.
export const RpcErrors = {
  parse: { code: -32700, message: 'Parse error' },
  invalidRequest: { code: -32600, message: 'Invalid Request' },
  invalidParams: { code: -32602, message: 'Invalid params' },
  /** No node serves the method (docs/routing.md "Unsupported methods"): Agave's own answer. */
  methodNotFound: { code: -32601, message: 'Method not found' },
} as const;

const JSONRPC_HEAD = '{"jsonrpc":"2.0","error":{"code":';

/**
 * Error body per docs/errors.md "Gateway errors". `id` is raw JSON text (byte-for-byte from the request) or null.
 * `data` is plain JSON-serialisable detail; never includes a token.
 */
export function errorBody(e: Pick<GatewayErrorSpec, 'code' | 'message'>, id: string | null, data?: Record<string, unknown>, message?: string): string {
  return (
    JSONRPC_HEAD +
    e.code +
    ',"message":' +
    JSON.stringify(message ?? e.message) +
    (data === undefined ? '' : ',"data":' + JSON.stringify(data)) +
    '},"id":' +
    (id ?? 'null') +
    '}'
  );
}

export function rpcErrorBody(e: { code: number; message: string }, id: string | null): string {
  return JSONRPC_HEAD + e.code + ',"message":"' + e.message + '"},"id":' + (id ?? 'null') + '}';
}

/** HTTP status line text for uWS writeStatus. */
export const STATUS_TEXT: Record<number, string> = {
  200: '200 OK',
  204: '204 No Content',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  403: '403 Forbidden',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  413: '413 Payload Too Large',
  408: '408 Request Timeout',
  415: '415 Unsupported Media Type',
  429: '429 Too Many Requests',
  431: '431 Request Header Fields Too Large',
  500: '500 Internal Server Error',
  502: '502 Bad Gateway',
  503: '503 Service Unavailable',
  504: '504 Gateway Timeout',
};

export function statusLine(http: number): string {
  return STATUS_TEXT[http] ?? String(http);
}
