// A provider's limits on a simulated node (docs/simulator.md "Knobs"): `rateCap` credits per
// second (bursting one second's worth) with `methodCosts`, answered HTTP 429 with Retry-After
// and a provider-style body past it; `disabledMethods` answered as Agave answers an unknown method.

import type { HttpRes } from '../../server/types.js';
import type { SimKnobs } from './knobs.js';

/** Agave's answer to a method it does not know (disabledMethods). */
export const METHOD_NOT_FOUND = '"error":{"code":-32601,"message":"Method not found"}';
/** A provider's 429 body (rateCap): JSON-RPC shaped, as Helius and QuickNode send. */
export const RATE_LIMITED = '{"jsonrpc":"2.0","error":{"code":-32429,"message":"Too many requests: over this plan\'s credits per second"},"id":null}';

/** Credits a request costs against rateCap: each call's methodCosts entry, else 1. */
export function costOf(body: Buffer, costs: Readonly<Record<string, number>>): number {
  let v: unknown;
  try {
    v = JSON.parse(body.toString('utf8'));
  } catch {
    return 1;
  }
  const one = (x: unknown): number => {
    const m = typeof x === 'object' && x !== null ? (x as { method?: unknown }).method : undefined;
    return typeof m === 'string' ? (costs[m] ?? 1) : 1;
  };
  if (!Array.isArray(v)) return one(v);
  let sum = 0;
  for (const x of v) sum += one(x);
  return sum > 0 ? sum : 1;
}

export class RateCap {
  /** Credits left (-1: not started) and when the bucket was last filled (performance.now()). */
  private tokens = -1;
  private last = 0;

  /** Whether the request fits (its credits are spent); false after answering it 429. */
  admit(res: HttpRes & { done?: boolean }, body: Buffer, k: Readonly<SimKnobs>, stats: { limited: number; credits: number }): boolean {
    const now = performance.now();
    if (this.tokens < 0) {
      this.tokens = k.rateCap;
      this.last = now;
    }
    this.tokens = Math.min(k.rateCap, this.tokens + ((now - this.last) * k.rateCap) / 1000);
    this.last = now;
    const cost = costOf(body, k.methodCosts);
    // A request dearer than the whole cap goes once the bucket is full.
    const need = Math.min(cost, k.rateCap);
    if (this.tokens >= need) {
      this.tokens -= cost;
      stats.credits += cost;
      return true;
    }
    stats.limited++;
    const wait = Math.max(1, Math.ceil((need - this.tokens) / k.rateCap));
    res.done = true;
    res.cork(() => {
      res.writeStatus('429 Too Many Requests').writeHeader('Retry-After', String(wait)).writeHeader('Content-Type', 'application/json').end(RATE_LIMITED);
    });
    return false;
  }
}
