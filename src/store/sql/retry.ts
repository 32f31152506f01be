// Transactions that several gateways run against one database at the same time (usage
// flushes, last-use stamps) can be chosen by PostgreSQL as the victim of a deadlock (40P01) or,
// under stricter isolation, fail to serialize (40001). Either way the whole transaction was
// rolled back, so running it again adds nothing twice. SQLite never reports these codes.

const RETRYABLE = new Set(['40P01', '40001']);

/** Attempts in all, the first included. */
export const TRANSACTION_ATTEMPTS = 5;

export function isRetryableConflict(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && RETRYABLE.has(code);
}

/** Runs `work` (one whole transaction) again after a deadlock or serialization failure, a bounded number of times. */
export async function retryConflicts<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (attempt >= TRANSACTION_ATTEMPTS || !isRetryableConflict(err)) throw err;
      // A short random pause so the two transactions do not meet in the same order again.
      await new Promise((r) => setTimeout(r, Math.random() * 10 * attempt));
    }
  }
}
