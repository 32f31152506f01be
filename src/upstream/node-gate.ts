// What keeps a call from a node beyond health and labels (docs/routing.md "Provider budgets",
// "Unsupported methods"): the node's budget is spent for this instant or it is cooling down
// after a 429, or it does not serve the method (configured or learned). The pool adds these
// nodes to the call's exclusion mask as it does tried ones; when that leaves no node, the
// call is refused with 7429 (`data.scope: "nodes"`, Retry-After the soonest refill) or, when
// no node serves the method, with JSON-RPC's own -32601. Per pick: one loop over the nodes on
// plain numbers, no allocation.

import { availableParallelism } from 'node:os';
import { Errors, RpcErrors, type GatewayErrorSpec } from '../errors.js';
import { routable } from '../routing/node-view.js';
import { MethodSupport } from '../routing/method-support.js';
import type { Config } from '../config/schema.js';
import { errorCodeOf } from '../solana/agave-errors.js';
import { isUnsupportedCode } from '../routing/method-support.js';
import type { UpstreamCall } from './call.js';
import type { UpstreamNode, NodeSpec } from './node.js';
import type { RouteRequest } from './router.js';

export const METHOD_NOT_FOUND: GatewayErrorSpec = { code: RpcErrors.methodNotFound.code, http: 200, message: RpcErrors.methodNotFound.message };

/** This data plane's part of each node's budget: with `rpc.workers: N` each worker routes on its own and holds 1/N. */
export function budgetShare(config: Config): number {
  const w = config.rpc.workers;
  const n = w === 'auto' ? availableParallelism() : w;
  return n > 1 ? 1 / n : 1;
}

/** What a call carries of the batch it is part of (UpstreamCall.from/to; 0, 0 for one call). */
interface Ranged {
  readonly from?: number;
  readonly to?: number;
}

export class NodeGate {
  readonly support: MethodSupport;
  private config: Config;
  /** Some node has a budget (else only cooldowns are checked). */
  private budgeted = false;
  /** The last exclude(): nodes left out for their budget or a cooldown, and for the method. */
  private spent = 0;
  private unsupported = 0;
  /** The last pick found no node only because of the gate: what onNoNode() refuses with (refuse()). */
  private refusal: GatewayErrorSpec | null = null;
  /** With a 7429 refusal: the soonest a spent node could take the call, in ms. */
  private waitMs = 0;

  constructor(config: Config, nodes: readonly UpstreamNode[]) {
    this.config = config;
    this.support = new MethodSupport(config.routing.unsupportedMs);
    this.configure(config, nodes);
  }

  /**
   * Applies `nodes[].budget` and `nodes[].methods` of `config` (null: the last one given; the
   * node set changed) to `nodes`, matched by id: budgets keep what is left of them, learned
   * exclusions stay while the node set does. A reload calls it through NodePool.reconfigure().
   */
  configure(config: Config | null, nodes: readonly UpstreamNode[]): void {
    if (config !== null) this.config = config;
    const c = this.config;
    const share = budgetShare(c);
    const byId = new Map<string, NodeSpec>(c.nodes.map((s) => [s.id, s]));
    const now = performance.now();
    let budgeted = false;
    for (const n of nodes) {
      const b = byId.get(n.id)?.budget;
      n.budget.configure(b, share, now);
      if (b !== undefined) budgeted = true;
    }
    this.budgeted = budgeted;
    this.support.configure(
      nodes.map((n) => byId.get(n.id)?.methods),
      nodes,
      c.routing.unsupportedMs,
    );
  }

  /** Nodes a call of `call.method` must not go to now (bits); remembers why for picked(). */
  exclude(nodes: readonly UpstreamNode[], call: RouteRequest, tried: number): number {
    const now = performance.now();
    const method = call.method;
    // A call with affinity keeps to its key's node for what nodes taught (docs/routing.md "Unsupported methods").
    const unsupported = this.support.configured(method) | (call.slot < 0 ? this.support.learnedBits(method, now) : 0);
    let spent = 0;
    const count = callCount(call);
    for (let i = 0; i < nodes.length; i++) {
      const n = nodes[i]!;
      if ((n.bit & (tried | unsupported)) !== 0) continue;
      const b = n.budget;
      if (now < b.coolUntil) spent |= n.bit;
      else if (this.budgeted && b.rate !== Infinity && b.blocked(b.costOf(method) * count, now, Date.now())) spent |= n.bit;
    }
    this.spent = spent;
    this.unsupported = unsupported;
    return spent | unsupported;
  }

  /**
   * After each pick: when it found no node (`none`, and the router does not park the call) while
   * the gate left nodes out, why: 7429 when a node that serves the method is only spent or
   * cooling (waitMs set), -32601 when none that is left serves it.
   */
  picked(none: boolean, nodes: readonly UpstreamNode[], call: RouteRequest, tried: number): void {
    this.refusal = null;
    if (!none || (this.spent | this.unsupported) === 0) return;
    const now = performance.now();
    const wall = Date.now();
    const count = callCount(call);
    let wait = Infinity;
    let supported = false;
    for (let i = 0; i < nodes.length; i++) {
      const n = nodes[i]!;
      if ((n.bit & tried) !== 0 || !routable(n) || (n.bit & this.unsupported) !== 0) continue;
      supported = true;
      if ((n.bit & this.spent) === 0) continue;
      const w = n.budget.waitMs(n.budget.costOf(call.method) * count, now, wall);
      if (w < wait) wait = w;
    }
    if (wait !== Infinity) {
      this.waitMs = Math.max(1, Math.ceil(wait));
      this.refusal = Errors.rateLimited;
    } else if (!supported && this.unsupported !== 0 && nodes.some((n) => (n.bit & tried) === 0 && routable(n))) this.refusal = METHOD_NOT_FOUND;
  }

  /** The router found no node: true when the gate's refusal ends the call. */
  refuse(call: UpstreamCall): boolean {
    const r = this.refusal;
    if (r === null) return false;
    this.refusal = null;
    call.refuse(r, r === Errors.rateLimited ? { scope: 'nodes', retryAfterMs: this.waitMs } : null);
    return true;
  }

  /**
   * A node's error answer: when it says the node does not serve the method, the node is not
   * asked it again for a while, and the call goes on (true) if another node may serve it within
   * `maxAttempts`. Null: not such an answer.
   */
  retryAnswer(nodes: readonly UpstreamNode[], maxAttempts: number, call: UpstreamCall, node: UpstreamNode, body: Buffer): boolean | null {
    if (!isUnsupportedCode(errorCodeOf(body))) return null;
    if (this.support.learn(call.method, nodes.indexOf(node), performance.now())) node.budget.learnedOne(Date.now());
    if (call.attempts >= maxAttempts || call.slot >= 0) return false;
    const out = call.tried | this.exclude(nodes, call, call.tried);
    for (const n of nodes) if ((n.bit & out) === 0 && routable(n)) return true;
    return false;
  }
}

/** Calls a routed request carries: a sub-batch's elements, else 1. */
export function callCount(call: RouteRequest): number {
  const r = call as RouteRequest & Ranged;
  const c = r.to === undefined || r.from === undefined ? 0 : r.to - r.from;
  return c > 1 ? c : 1;
}
