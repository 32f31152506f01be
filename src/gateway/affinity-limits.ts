// Affinity and rate limits for one analysed request (docs/routing.md "Affinity and rate limits"): which
// hash slot routes it, and whether the hot-key, token and method buckets let it through.

import { A_SINGLE, KIND_INVALID, type Analysis } from '../rpc/analyze.js';
import { MODE_DEFAULT, MODE_KEY } from './headers.js';
import type { Runtime } from './runtime.js';

/** What admission reads of a request. */
export interface AffinityRequest {
  readonly token: { readonly id: string };
  /** MODE_DEFAULT, MODE_KEY or MODE_NODE (headers.ts). */
  readonly mode: number;
  /** The affinity key; '' for none (key mode then keys on the client IP). */
  readonly key: string;
  /** Resolved only when IP affinity needs it. */
  clientIp(): string;
}

/** admit()'s answer when a rate limit refused the request; `rt.limiter` holds the scope and the wait. */
export const REFUSED = -2;

/**
 * The request's affinity slot (-1 = default routing) after taking its calls from every bucket
 * that applies, or REFUSED. Hot-key buckets apply to explicit key affinity only: automatic IP
 * affinity is the gateway's own choice and must not throttle a default-mode client.
 */
export function admit(rt: Runtime, a: Analysis, req: AffinityRequest): number {
  const plan = a.plan;
  let calls = 1;
  let auto = false;
  if (plan !== null && plan.method !== '') {
    calls = plan.count;
    auto = rt.autoAffinity.has(plan.method);
  } else if (plan !== null) {
    calls = 0;
    // Mixed batches: one lookup per run of equal methods (the same interned string).
    let last = '';
    for (let i = 0; i < plan.count; i++) {
      if (plan.kinds[i] === KIND_INVALID) continue;
      calls++;
      const m = plan.methods[i]!;
      if (m === last) continue;
      last = m;
      if (!auto && rt.autoAffinity.has(m)) auto = true;
    }
  } else auto = a.type === A_SINGLE && rt.autoAffinity.has(a.method);
  const now = performance.now();
  let slot = -1;
  if (req.mode === MODE_KEY) {
    const byIp = req.key === '';
    const key = byIp ? req.clientIp() : req.key;
    slot = rt.slots.slot(key);
    if (!rt.limiter.allowKey(key, byIp, calls, now)) return REFUSED;
  } else if (req.mode === MODE_DEFAULT && auto) {
    slot = rt.slots.slot(req.clientIp());
  }
  if (!rt.limiter.allowToken(req.token.id, calls, now)) return REFUSED;
  if (!rt.limiter.allowMethods(req.token.id, plan === null ? a.method : plan.methods, now)) return REFUSED;
  return slot;
}
