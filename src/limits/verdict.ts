// What a limit check answers, as one number: a check that passes allocates nothing, and a
// refusal carries its scope and wait in the value itself, so nothing is left on the limiter to
// be read afterwards (docs/routing.md "Affinity and rate limits", code 7429).
//
// A refusal is `waitMs * 8 + scope` (scope 1..4, the wait a whole number of ms ≥ 1); PASS is 0.
// An admission (admission.ts) is `slot + 1` when admitted (slot -1 = default routing) and the
// refusal negated when not.

export const PASS = 0;

export const SCOPE_KEY = 'affinity-key';
export const SCOPE_IP = 'ip';
export const SCOPE_TOKEN = 'token';
export const SCOPE_METHOD = 'method';

export const S_KEY = 1;
export const S_IP = 2;
export const S_TOKEN = 3;
export const S_METHOD = 4;

const SCOPE_NAMES = ['', SCOPE_KEY, SCOPE_IP, SCOPE_TOKEN, SCOPE_METHOD] as const;
const SCOPE_UNITS = 8;

/** A refusal of `scope` (S_*) that may be retried after `waitMs`. */
export function refusal(scope: number, waitMs: number): number {
  return waitMs * SCOPE_UNITS + scope;
}

/** The scope's name as error bodies and metrics give it ('' for PASS). */
export function refusalScope(r: number): string {
  return SCOPE_NAMES[r % SCOPE_UNITS]!;
}

export function refusalWaitMs(r: number): number {
  return Math.floor(r / SCOPE_UNITS);
}

/** An admission that let the request through, routed by `slot` (-1 = default routing). */
export function admitted(slot: number): number {
  return slot + 1;
}

export function isAdmitted(admission: number): boolean {
  return admission >= 0;
}

/** The affinity slot of an admitted request. */
export function slotOf(admission: number): number {
  return admission - 1;
}

/** The refusal of a refused admission. */
export function refusalOf(admission: number): number {
  return -admission;
}

/**
 * A call refused because every node's budget is spent or cooling (7429 `scope: "nodes"`,
 * docs/routing.md "Provider budgets"): its Retry-After in whole seconds, counted under that
 * scope; '' for any other error.
 */
export function nodesRetryAfter(code: number, data: Record<string, unknown> | undefined, metrics: { rateLimited(scope: string): void }): string {
  if (code !== 7429 || data?.scope !== 'nodes' || typeof data.retryAfterMs !== 'number') return '';
  metrics.rateLimited('nodes');
  return String(Math.max(1, Math.ceil(data.retryAfterMs / 1000)));
}
