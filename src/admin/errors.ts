// Every error the admin listener answers (docs/errors.md "Admin API errors"). The body stays
// `{"error":"<message>"}`, the message saying exactly what was wrong; `code` names the case
// so that the docs table and this list can be checked against each other
// (test/unit/errors-documented.test.ts).

export interface AdminErrorSpec {
  readonly code: string;
  readonly status: number;
}

export const AdminErrors = {
  /** A PATCH body that is not a valid change, or a node id that is not valid percent-encoding. */
  invalid: { code: 'invalid', status: 400 },
  /** Reload of a config file that does not validate (ReloadError 400); nothing changed. */
  invalidConfig: { code: 'invalid_config', status: 400 },
  /** No admin.token configured: every route but /healthz and /readyz. */
  disabled: { code: 'disabled', status: 401 },
  /** No bearer token, or a wrong one. */
  unauthorized: { code: 'unauthorized', status: 401 },
  /** No such route, or no node with that id. */
  notFound: { code: 'not_found', status: 404 },
  methodNotAllowed: { code: 'method_not_allowed', status: 405 },
  /** Reload without --config (demo mode; ReloadError 409). */
  nothingToReload: { code: 'nothing_to_reload', status: 409 },
  tooLarge: { code: 'too_large', status: 413 },
  internal: { code: 'internal', status: 500 },
} as const satisfies Record<string, AdminErrorSpec>;
