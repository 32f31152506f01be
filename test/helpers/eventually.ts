// Tests wait for a condition with a deadline instead of sleeping and then asserting: the
// same test is fast on an idle machine and still passes on a loaded one.

/** What is awaited; a function is called only on timeout, so the message can show the last state seen. */
export type WaitingFor = string | (() => string);

function timedOut(what: WaitingFor, ms: number): Error {
  return new Error(`timed out after ${ms} ms waiting for ${typeof what === 'string' ? what : what()}`);
}

/** Resolves once `cond()` is truthy (sync or async); rejects naming `what` after `ms`. */
export async function eventually(what: WaitingFor, cond: () => boolean | Promise<boolean>, ms = 5000, everyMs = 20): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > end) throw timedOut(what, ms);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Resolves with the first value of `get()` that is not undefined; rejects naming `what` after `ms`. */
export async function eventuallyValue<T>(what: WaitingFor, get: () => T | undefined | Promise<T | undefined>, ms = 5000, everyMs = 20): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await get();
    if (v !== undefined) return v;
    if (Date.now() > end) throw timedOut(what, ms);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
