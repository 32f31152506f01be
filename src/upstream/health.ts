// Active health probes (docs/routing.md "Retries and node health"): every interval each node is asked whether it is healthy and
// at which slot (Solana: getHealth + getSlot; EVM: eth_blockNumber). A node more than
// maxSlotLag behind the best is lagging. Ejected nodes are probed only once their backoff
// has passed (half-open); one good probe readmits them.

import type { Config } from '../config/schema.js';
import { answersProbes, bestSlot, probedState, type NodeStateName } from '../routing/node-view.js';
import type { UpstreamNode } from './node.js';

export interface HealthOptions {
  chain: 'solana' | 'evm';
  intervalMs: number;
  maxSlotLag: number;
  timeoutMs: number;
  /** Solana: the chain watch's round period while a confirmation is due (health.chainPollMs; chain-watch.ts). */
  chainPollMs?: number;
}

/** The probes' and the chain watch's options from a config (at start, and on each reload). */
export function healthOptionsOf(config: Config): HealthOptions {
  const h = config.health;
  return { chain: config.chain, intervalMs: h.intervalMs, maxSlotLag: h.maxSlotLag, timeoutMs: h.timeoutMs, chainPollMs: h.chainPollMs };
}

/** A node's health as the control plane sends it to a worker (applyHealth), with the shared memory it reads. */
export interface NodeHealthUpdate {
  id: string;
  state: NodeStateName;
  slot: number;
  ejectedUntil: number;
  weight: number;
  drained: boolean;
  /** The probes' answer time: a worker's node starts from it until its own traffic measures
   * one (a slow node must not get pipelined requests from its first burst on). */
  probeMs: number;
  /** The node's high-water mark (routing/high-water.ts) and chain view (solana/chain-view.ts). */
  mark?: SharedArrayBuffer;
  chain?: SharedArrayBuffer;
  /** Its send-ranking cell (routing/send-rank.ts). */
  rank?: SharedArrayBuffer;
  /** The pool's blockhash book and fresh-routing counters (solana/); absent for EVM pools. */
  book?: SharedArrayBuffer | undefined;
  freshCounts?: SharedArrayBuffer | undefined;
}

export interface ProbeResult {
  ok: boolean;
  slot: number;
  reason: string;
  /** How long the probe took. */
  ms: number;
  /** The node answered 429 (its provider's rate limit): no verdict on its health. */
  limited?: boolean;
}

const GET_HEALTH = '{"jsonrpc":"2.0","id":1,"method":"getHealth"}';
const GET_SLOT = '{"jsonrpc":"2.0","id":1,"method":"getSlot"}';
const ETH_BLOCK_NUMBER = '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}';

/** A JSON-RPC answer to one of the gateway's own calls (probes, the chain watch). */
export interface ProbeAnswer {
  result?: unknown;
  error?: { code?: number; message?: string; data?: { numSlotsBehind?: unknown } };
}

/** One call on the node's probe connections: the answer's text; rejects on a connection error, a timeout or a non-200. */
export async function probePost(node: UpstreamNode, body: string, timeoutMs: number): Promise<string> {
  const res = await node.probes.post(node.path, body, timeoutMs);
  if (res.status !== 200) throw new Error('HTTP ' + res.status);
  return res.text;
}

/** probePost's answer, parsed as one JSON-RPC answer. */
export async function rpc(node: UpstreamNode, body: string, timeoutMs: number): Promise<ProbeAnswer> {
  return JSON.parse(await probePost(node, body, timeoutMs)) as ProbeAnswer;
}

export type ProbeFn = (node: UpstreamNode, opts: HealthOptions) => Promise<ProbeResult>;

export async function probe(node: UpstreamNode, opts: HealthOptions): Promise<ProbeResult> {
  const t0 = performance.now();
  const fail = (reason: string): ProbeResult => ({ ok: false, slot: -1, reason, ms: performance.now() - t0 });
  try {
    if (opts.chain === 'evm') {
      const r = await rpc(node, ETH_BLOCK_NUMBER, opts.timeoutMs);
      if (typeof r.result !== 'string') return fail(r.error?.message ?? 'no block number');
      return { ok: true, slot: Number.parseInt(r.result, 16), reason: '', ms: performance.now() - t0 };
    }
    // One after the other: getSlot then runs on a warm connection and its time is the node's.
    const health = await rpc(node, GET_HEALTH, opts.timeoutMs);
    if (health.result !== 'ok') return fail(health.error?.message ?? 'getHealth not ok');
    const t1 = performance.now();
    const slot = await rpc(node, GET_SLOT, opts.timeoutMs);
    if (typeof slot.result !== 'number') return fail(slot.error?.message ?? 'no slot');
    return { ok: true, slot: slot.result, reason: '', ms: performance.now() - t1 };
  } catch (err) {
    const reason = (err as Error).message;
    return reason === 'HTTP 429' ? { ok: false, slot: -1, reason, ms: performance.now() - t0, limited: true } : fail(reason);
  }
}

/**
 * Before a node's first live answer its latency estimate comes from probes, so the first
 * burst of traffic is routed (and pipelined, or not) as the node deserves.
 */
export function seedLatency(node: UpstreamNode, r: ProbeResult): void {
  if (r.ok && node.requests === 0) node.ewmaMs = r.ms;
}

/** Probed this round: not already being probed (a slow probe must not pile up behind the
 * next), and an ejected node only once its backoff has passed (half-open). */
function isDue(n: UpstreamNode, now: number): boolean {
  return !n.probing && (n.state !== 'ejected' || now >= n.ejectedUntil);
}

/** The best slot once these probe results are in: lag is measured against the freshest
 * answer, which may come from a node probed in the same round. */
export function bestSlotAfterProbes(nodes: readonly UpstreamNode[], results: readonly ProbeResult[]): number {
  let best = bestSlot(nodes);
  for (const r of results) if (r.ok && r.slot > best) best = r.slot;
  return best;
}

/** A probe's verdict on a node: a failed probe makes it unhealthy (an ejected node stays
 * ejected, with a doubled backoff); a good one readmits an ejected node and sets healthy or
 * lagging from its slot. */
export function applyProbe(node: UpstreamNode, r: ProbeResult, best: number, maxSlotLag: number): void {
  const before = node.state;
  if (r.limited === true) {
    // A rate limit is not ill health: the node keeps its state (docs/routing.md "Provider budgets").
    node.lastError = r.reason;
    return;
  }
  if (!r.ok) {
    node.lastError = r.reason;
    if (before === 'ejected') node.eject(Date.now());
    else node.state = 'unhealthy';
    return;
  }
  node.slot = r.slot;
  seedLatency(node, r);
  if (before === 'ejected') node.readmit();
  else if (answersProbes(node)) node.resetBackoff();
  node.state = probedState(r.slot, best, maxSlotLag);
}

export interface HealthEvents {
  stateChanged(node: UpstreamNode, from: string, reason: string): void;
  /** After every round (the control plane sends the results to its workers). */
  roundDone?(): void;
}

export class HealthChecker {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly nodes: () => readonly UpstreamNode[],
    private readonly opts: HealthOptions,
    private readonly events: HealthEvents,
    /** How a node is asked; tests hand in scripted results. */
    private readonly probeNode: ProbeFn = probe,
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.round().finally(() => this.schedule());
    }, this.opts.intervalMs);
    this.timer.unref();
  }

  /** One probe of every node that is due; resolves when all answered or timed out. */
  async round(): Promise<void> {
    const nodes = this.nodes();
    const now = Date.now();
    const due = nodes.filter((n) => isDue(n, now));
    for (const n of due) n.probing = true;
    const ejectedBefore = due.map((n) => n.state === 'ejected');
    const results = await Promise.all(due.map((n) => this.probeNode(n, this.opts)));
    const best = bestSlotAfterProbes(nodes, results);
    for (let i = 0; i < due.length; i++) {
      const node = due[i]!;
      const r = results[i]!;
      node.probing = false;
      const before = node.state;
      // Ejected by live traffic while this probe ran: the result predates the ejection and
      // must neither readmit the node nor double its backoff; the half-open probe decides.
      if (before === 'ejected' && !ejectedBefore[i]) continue;
      applyProbe(node, r, best, this.opts.maxSlotLag);
      if (node.state !== before) this.events.stateChanged(node, before, r.reason);
    }
    this.events.roundDone?.();
  }
}
