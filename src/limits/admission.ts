// Affinity and rate limits for one analysed request (docs/routing.md "Affinity and rate limits"): which
// hash slot routes it, and whether the hot-key, token and method buckets let it through. The
// answer is one number (verdict.ts): admitted with its slot, or refused with scope and wait.

import { MODE_DEFAULT, MODE_KEY } from '../routing/affinity-mode.js';
import { A_SINGLE, KIND_INVALID, type Analysis } from '../rpc/analyze.js';
import type { RateLimiter } from './limiter.js';
import { admitted, PASS } from './verdict.js';

/** Affinity key or IP → hash slot (see src/routing/keymap.ts). */
export interface SlotHasher {
  slot(key: string): number;
}

/** What admission reads of a request. */
export interface AdmissionRequest {
  readonly token: { readonly id: string };
  /** MODE_DEFAULT, MODE_KEY or MODE_NODE (routing/affinity-mode.ts). */
  readonly mode: number;
  /** The affinity key; '' for none (key mode then keys on the client IP). */
  readonly key: string;
  /** Resolved only when IP affinity needs it. */
  clientIp(): string;
}

/** The services admission takes from: the limiter and the key hasher. */
export interface AdmissionParts {
  readonly limiter: RateLimiter;
  readonly slots: SlotHasher;
}

/**
 * Takes the request's calls from every bucket that applies: admitted(slot) (slot -1 = default
 * routing) or a refusal negated (verdict.ts). Hot-key buckets apply to explicit key affinity
 * only: automatic IP affinity is the gateway's own choice and must not throttle a default-mode
 * client.
 */
export function admit(parts: AdmissionParts, autoAffinity: ReadonlySet<string>, a: Analysis, req: AdmissionRequest): number {
  const plan = a.plan;
  const limiter = parts.limiter;
  let calls = 1;
  let auto = false;
  if (plan !== null && plan.method !== '') {
    calls = plan.count;
    auto = autoAffinity.has(plan.method);
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
      if (!auto && autoAffinity.has(m)) auto = true;
    }
  } else auto = a.type === A_SINGLE && autoAffinity.has(a.method);
  const now = performance.now();
  let slot = -1;
  let r = PASS;
  if (req.mode === MODE_KEY) {
    const byIp = req.key === '';
    const key = byIp ? req.clientIp() : req.key;
    slot = parts.slots.slot(key);
    r = limiter.takeKey(key, byIp, calls, now);
    if (r !== PASS) return -r;
  } else if (req.mode === MODE_DEFAULT && auto) {
    slot = parts.slots.slot(req.clientIp());
  }
  r = limiter.takeToken(req.token.id, calls, now);
  if (r !== PASS) return -r;
  r = limiter.takeMethods(req.token.id, plan === null ? a.method : plan.methods, now);
  if (r !== PASS) return -r;
  return admitted(slot);
}
