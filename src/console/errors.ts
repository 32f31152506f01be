// Errors of the console's JSON API. Every error answers `{error: {code, message}}`; callers and
// clients match on `code`, which is stable. Nothing here ever carries a password or token.
// docs/errors.md "Console API errors" lists every code below (test/unit/errors-documented.test.ts).

export const ApiErrors = {
  invalid: { code: 'invalid', status: 400, message: 'Invalid request' },
  unauthorized: { code: 'unauthorized', status: 401, message: 'Log in first' },
  badCredentials: { code: 'bad_credentials', status: 401, message: 'Wrong email or password' },
  csrf: { code: 'csrf', status: 403, message: 'Missing or wrong X-CSRF-Token header' },
  registrationClosed: { code: 'registration_closed', status: 403, message: 'Registration is closed on this server' },
  notFound: { code: 'not_found', status: 404, message: 'Not found' },
  conflict: { code: 'conflict', status: 409, message: 'Already exists' },
  throttled: { code: 'throttled', status: 429, message: 'Too many failed logins; try again later' },
  internal: { code: 'internal', status: 500, message: 'Internal error' },
} as const;

/** Codes for errors fastify itself raises (malformed JSON, wrong content type, …), by status. */
export const HTTP_CODES: Record<number, string> = {
  400: 'bad_request',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  413: 'too_large',
  415: 'unsupported_media_type',
};

export type ApiErrorCode = keyof typeof ApiErrors;

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;

  constructor(
    name: ApiErrorCode,
    message?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message ?? ApiErrors[name].message);
    this.status = ApiErrors[name].status;
    this.code = ApiErrors[name].code;
  }
}

export function errorBody(code: string, message: string): { error: { code: string; message: string } } {
  return { error: { code, message } };
}

interface AjvIssue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

/** A validation failure as one message naming the field: "password: must be at least 10 characters". */
export function validationMessage(issues: AjvIssue[], context: string): string {
  const first = issues[0];
  if (!first) return 'invalid request';
  const path = first.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const p = first.params;
  switch (first.keyword) {
    case 'required':
      return `${join(path, String(p.missingProperty))}: is required`;
    case 'additionalProperties':
      return `${join(path, String(p.additionalProperty))}: is not a known field`;
    case 'minLength':
      return `${field(path, context)}: must be at least ${String(p.limit)} characters`;
    case 'maxLength':
      return `${field(path, context)}: must be at most ${String(p.limit)} characters`;
    case 'format':
      return `${field(path, context)}: must be a valid ${String(p.format) === 'email' ? 'email address' : String(p.format)}`;
    case 'enum':
      return `${field(path, context)}: must be one of ${(p.allowedValues as unknown[]).join(', ')}`;
    case 'pattern':
      return `${field(path, context)}: must not be blank`;
    case 'type':
      return `${field(path, context)}: must be ${String(p.type)}`;
    default:
      return `${field(path, context)}: ${first.message ?? 'is invalid'}`;
  }
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

function field(path: string, context: string): string {
  return path || context;
}
