// JSON shapes of the admin API, and the checks of what it accepts.

import type { NodeLatency } from '../metrics/latency-buckets.js';
import type { BudgetView, NodeBudget } from '../routing/budget.js';
import type { NodeMark } from '../routing/high-water.js';
import { freshestSlots, lagAt, type ChainView } from '../solana/chain-view.js';
import { bestSlot, routable, slotLag, type NodeView } from '../routing/node-view.js';

/** What the admin API shows of a node, beyond what the routing rules read. */
export interface AdminNode extends NodeView {
  readonly url: string;
  readonly requests: number;
  readonly failures: number;
  readonly lastError: string | null;
  readonly latency: NodeLatency;
  /** Shared by every worker: the admin view is the whole gateway's. */
  readonly mark: NodeMark;
  /** Its chain view (docs/solana-routing.md "Chain view"), shared by every worker. */
  readonly chain: ChainView;
  /** Provider budget, 429 cooldown and cost figures (docs/routing.md "Provider budgets"). */
  readonly budget: NodeBudget;
  recentRps(now: number): number;
}

/** A node in GET /admin/nodes. */
export interface NodeJson {
  id: string;
  url: string;
  state: string;
  weight: number;
  drained: boolean;
  /** Can take new traffic: not drained, weight > 0, not ejected. */
  routable: boolean;
  /** Last slot (block number) from the health probe; null until known. */
  slot: number | null;
  /** Slots behind the best node; null until known. */
  lag: number | null;
  inflight: number;
  /** Attempts sent (retries included) and failed, since the node was added. */
  requests: number;
  failures: number;
  /** Attempts per second over the last ~5 s. */
  rps: number;
  ewmaMs: number;
  /** Successful attempts over the last 50–60 s, in ms; percentiles are null while count is 0. */
  latency: { count: number; p50: number | null; p90: number | null; p99: number | null; p999: number | null };
  lastError: string | null;
  /** Highest slot the node served to an affinity key, over all workers; null while none (docs/routing.md "Monotonic reads"). */
  highWaterSlot: number | null;
  /** Its processed, confirmed and finalized slots and first available block; null until known (docs/solana-routing.md "Chain view"). */
  chain: { processed: number | null; confirmed: number | null; finalized: number | null; firstAvailable: number | null };
  /** Slots behind the freshest node at each commitment; null until known (docs/solana-routing.md "Chain view"). */
  chainLag: { processed: number | null; confirmed: number | null; finalized: number | null };
  /** Its provider budget (the whole node's, over every worker); null without one. */
  budget: BudgetView | null;
  /** Milliseconds it still cools down after a 429 (0: none). */
  coolingMs: number;
  /** Since start: calls and credits sent, 429s, cooldowns, methods learned unsupported; and per hour, newest first (last 24 h). */
  costs: {
    calls: number;
    credits: number;
    limited: number;
    cooldowns: number;
    learned: number;
    hours: { hour: string; calls: number; credits: number; limited: number; cooldowns: number; learned: number }[];
  };
  /** Methods it answered "method not found" for, not asked again for now (docs/routing.md "Unsupported methods"). */
  unsupported: string[];
}

const ms3 = (us: number): number => Math.round(us) / 1000;

export function nodeJson(n: AdminNode, best: number, now: number, freshest: readonly number[], unsupported: string[] = []): NodeJson {
  const l = n.latency.window.summary(now);
  const p = (us: number): number | null => (l.count === 0 ? null : ms3(us));
  const wall = Date.now();
  return {
    id: n.id,
    url: n.url,
    state: n.state,
    weight: n.weight,
    drained: n.drained,
    routable: routable(n),
    slot: n.slot < 0 ? null : n.slot,
    lag: slotLag(n, best),
    inflight: n.inflight,
    requests: n.requests,
    failures: n.failures,
    rps: Math.round(n.recentRps(now) * 10) / 10,
    ewmaMs: Math.round(n.ewmaMs * 1000) / 1000,
    latency: { count: l.count, p50: p(l.p50), p90: p(l.p90), p99: p(l.p99), p999: p(l.p999) },
    lastError: n.lastError,
    highWaterSlot: n.mark.slot === 0 ? null : n.mark.slot,
    chain: n.chain.snapshot(),
    chainLag: { processed: lagAt(n.chain, freshest, 0), confirmed: lagAt(n.chain, freshest, 1), finalized: lagAt(n.chain, freshest, 2) },
    budget: n.budget.view(now, wall),
    coolingMs: Math.max(0, Math.ceil(n.budget.coolUntil - now)),
    costs: {
      calls: n.budget.calls,
      credits: n.budget.credits,
      limited: n.budget.limited,
      cooldowns: n.budget.cooldowns,
      learned: n.budget.learned,
      hours: n.budget.hourly(wall),
    },
    unsupported,
  };
}

/** `unsupported`: node index → methods learned unsupported (the pool's gate). */
export function nodesJson(nodes: readonly AdminNode[], now = performance.now(), unsupported?: (i: number) => string[]): NodeJson[] {
  const best = bestSlot(nodes);
  const freshest = freshestSlots(nodes);
  return nodes.map((n, i) => nodeJson(n, best, now, freshest, unsupported?.(i) ?? []));
}

export interface NodePatch {
  weight?: number;
  drained?: boolean;
}

const PATCH_FIELDS = ['weight', 'drained'];

function show(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? v.slice(0, 37) + '...' : v);
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  return String(v);
}

/** Checks a PATCH body; returns the patch, or the problem (naming the field). */
export function parsePatch(text: string): NodePatch | string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return 'body must be JSON, e.g. {"weight": 2} or {"drained": true}';
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return `body must be a JSON object with "weight" and/or "drained", got ${show(body)}`;
  const o = body as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!PATCH_FIELDS.includes(k)) return `unknown field ${JSON.stringify(k)}; allowed: weight, drained`;
  const patch: NodePatch = {};
  if ('weight' in o) {
    const w = o.weight;
    if (typeof w !== 'number' || !Number.isFinite(w) || w < 0) return `weight: expected a number >= 0, got ${show(w)}`;
    patch.weight = w;
  }
  if ('drained' in o) {
    if (typeof o.drained !== 'boolean') return `drained: expected true or false, got ${show(o.drained)}`;
    patch.drained = o.drained;
  }
  if (patch.weight === undefined && patch.drained === undefined) return 'nothing to change: give "weight" (a number >= 0) and/or "drained" (true or false)';
  return patch;
}
