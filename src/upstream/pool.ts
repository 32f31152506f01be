// The node pool: upstream nodes, the router the hot path asks for a node (default routing, or
// the affinity slot's node sequence), and the health loop.

import type { Logger } from 'pino';
import { rpcNodes } from '../config/node-kinds.js';
import type { Config } from '../config/schema.js';
import { Errors } from '../errors.js';
import { answerSlot } from '../routing/answer-slot.js';
import { KeyedPicker, knownAt, markFloor, WAIT, type PreviousMap } from '../routing/keyed-pick.js';
import { KeyHasher, KeyMap } from '../routing/keymap.js';
import { buildMethodRules, type MethodRule } from '../routing/method-rules.js';
import { answersProbes, routable, usable } from '../routing/node-view.js';
import { pickUnkeyed, sendRankOf, takeExplored, type RankSettings } from '../routing/send-rank.js';
import type { UpstreamCall } from './call.js';
import { CatchUpWaits } from './catch-up.js';
import { HealthChecker, healthOptionsOf, type HealthOptions, type NodeHealthUpdate } from './health.js';
import { nextNodeSet, type NodeSetChange } from './node-set.js';
import { UpstreamNode, type ClientOptions, type EjectPolicy, type NodeSpec } from './node.js';
import { MethodLatency, type RouteRequest, type Router } from './router.js';
import { BlockhashBook } from '../solana/blockhash-book.js';
import { FreshCause, FreshRouting, type FreshCall } from '../solana/fresh-routing.js';
import { archiveBitsOf, learnBlockhash, retryOnAnotherNode } from './answer-retry.js';
import { setByOperator, settleNodes } from './node-settings.js';
import { ChainWatches } from './chain-watch.js';
import { applyHealthTo } from './apply-health.js';
import { NodeGate } from './node-gate.js';

export class NodePool implements Router {
  nodes: UpstreamNode[];
  maxAttempts: number;
  readonly methodLatency: MethodLatency;
  readonly health: HealthChecker;
  /** Set by start(): xxhash-wasm loads asynchronously. */
  hasher: KeyHasher | null = null;
  keyMap: KeyMap;
  /** The nodes keyMap was built over (reloads replace `nodes`). */
  private mapNodes: UpstreamNode[];
  private readonly seed: number;
  /** Affinity slot → node, monotonic reads (docs/routing.md "Monotonic reads"). */
  readonly picker = new KeyedPicker<UpstreamNode>();
  /** The map before the last weight or node change, until every usable node caught up with it. */
  private previous: PreviousMap<UpstreamNode> | null = null;
  /** The last keyed pick answered WAIT: onNoNode() parks the call. */
  private waiting = false;
  /** Solana chains: minContextSlot and blockhash-aware routing (docs/solana-routing.md); null otherwise. */
  readonly fresh: FreshRouting | null;
  /** The last pick found no node only because the others are behind what the call needs: onNoNode() parks it. */
  private freshWaiting = false;
  /** Nodes labelled `history: archive` (bits); chain watches (control plane or inline only); health.chainWatch. */
  private archiveBits = 0;
  private readonly watches: ChainWatches;
  private chainWatch: boolean;
  private waitMs: number;
  readonly waits = new CatchUpWaits();
  /** routing.methods (docs/routing.md "Label routing"); empty when none. */
  private methodConfig: Config['routing']['methods'];
  methodRules: Map<string, MethodRule>;
  /** routing.landing.ranking in effect (docs/landing.md "Sends go where they land"; the control plane's ranking reads it too). */
  sendRank: RankSettings;
  /** Provider budgets, 429 cooldowns and the methods each node serves (node-gate.ts; docs/routing.md "Provider budgets"): its exclusions count as tried. */
  readonly gate: NodeGate;
  private rateTimer: NodeJS.Timeout | null = null;
  /** Told when a node stops taking traffic (unhealthy, ejected, drained): WS subscriptions move. */
  readonly unusableListeners: ((node: UpstreamNode) => void)[] = [];
  /** Told after each probe round and operator change (the control plane informs its workers). */
  readonly healthListeners: (() => void)[] = [];
  /** Shared by every node and the health loop; reload updates them in place. */
  private readonly policy: EjectPolicy;
  private readonly healthOpts: HealthOptions;
  /** Client settings for nodes created now and by later reloads (connect timeout follows reloads). */
  private readonly clientOpts: ClientOptions;
  /** Closes of nodes removed by a reload (they finish their in-flight requests first). */
  private readonly retiring = new Set<Promise<void>>();

  /** False in a data-plane worker: the control plane probes and sends the results (applyHealth). */
  private readonly probes: boolean;

  constructor(
    config: Config,
    private readonly log: Logger,
    opts: { probes?: boolean } = {},
  ) {
    this.probes = opts.probes ?? true;
    this.maxAttempts = config.routing.maxAttempts;
    this.clientOpts = {
      ...config.upstream,
      connectTimeoutMs: Math.min(config.limits.upstreamTimeoutMs, 10_000),
      onPipeliningDropped: (node, reason) =>
        log.warn({ node, reason }, 'node dropped a connection carrying pipelined requests: one request per connection to it for 5 minutes'),
    };
    this.methodLatency = new MethodLatency(config.upstream.pipelineStallMs);
    const h = config.health;
    this.policy = { ejectAfterFailures: h.ejectAfterFailures, ejectBackoffMs: h.ejectBackoffMs, ejectBackoffMaxMs: h.ejectBackoffMaxMs };
    this.healthOpts = healthOptionsOf(config);
    this.nodes = rpcNodes(config.nodes).map((spec, i) => new UpstreamNode(spec, i, this.policy, this.clientOpts));
    this.archiveBits = archiveBitsOf(this.nodes);
    this.chainWatch = config.health.chainWatch;
    this.watches = new ChainWatches(log);
    this.fresh = config.chain === 'solana' ? new FreshRouting(new BlockhashBook(), config.routing.minContextSlotWaitMs, config.routing.blockhashWaitMs) : null;
    this.seed = config.affinity.seed;
    this.keyMap = new KeyMap(this.nodes);
    this.mapNodes = this.nodes;
    this.picker.monotonic = config.affinity.monotonic;
    this.waitMs = config.affinity.monotonicWaitMs;
    this.methodConfig = config.routing.methods;
    this.methodRules = buildMethodRules(this.methodConfig, this.nodes);
    this.sendRank = sendRankOf(config);
    this.gate = new NodeGate(config, this.nodes);
    this.health = new HealthChecker(() => this.nodes, this.healthOpts, {
      stateChanged: (node, from, reason) => {
        this.log[node.stateChangeLevel(from)]({ node: node.id, from, to: node.state, reason: reason || undefined, slot: node.slot }, 'node state changed');
        if (!answersProbes(node)) for (const l of this.unusableListeners) l(node);
      },
      roundDone: () => {
        this.refreshRouting();
        for (const l of this.healthListeners) l();
      },
    });
  }

  route(call: RouteRequest): UpstreamNode | null {
    this.waiting = false;
    this.freshWaiting = false;
    const fresh = this.fresh;
    // Fresh-state routing: nodes known to be behind what the call needs count as tried.
    let behind = 0;
    // What it routes is a call (a coalescing probe carries only slot, tried and method).
    const fc = fresh !== null && this.chainWatch && (call as Partial<FreshCall>).freshRead !== undefined ? (call as RouteRequest & FreshCall) : null;
    if (fc !== null) {
      // The wait for a qualifying node is over: the freshest routable node the call has not tried.
      if (fc.freshExpired) return this.nodes[fresh!.freshest(this.nodes, fc)] ?? null;
      behind = fresh!.excluded(this.nodes, fc);
      if (fc.archiveOnly) behind |= ~this.archiveBits;
    }
    const n = this.pick(call, call.tried | behind | this.gate.exclude(this.nodes, call, call.tried | behind));
    if (takeExplored() && call.tried === 0) call.explored = true;
    this.gate.picked(n === null && !this.waiting, this.nodes, call, call.tried | behind);
    if (behind !== 0) {
      if (n === null) this.freshWaiting = !this.waiting && this.nodes.some((x) => (x.bit & call.tried) === 0 && routable(x));
      else if (call.tried === 0) fresh!.tally(fc!.needSlot >= 0 ? FreshCause.RoutedByContextSlot : FreshCause.RoutedByBlockhash);
    }
    return n;
  }

  private pick(call: RouteRequest, tried: number): UpstreamNode | null {
    const rule = this.methodRules.size === 0 ? null : (this.methodRules.get(call.method) ?? null);
    if (rule === null) return call.slot < 0 ? pickUnkeyed(this.nodes, call.method, tried, this.sendRank) : this.keyed(call, tried, null);
    // Label routing: the method's nodes only; the others when none is usable and fallback is any.
    const n = call.slot < 0 ? pickUnkeyed(this.nodes, call.method, tried | rule.exclude, this.sendRank) : this.keyed(call, tried, rule.allowed);
    if (n !== null || this.waiting || !rule.fallbackAny) return n;
    return call.slot < 0 ? pickUnkeyed(this.nodes, call.method, tried, this.sendRank) : this.keyed(call, tried, null);
  }

  /**
   * Key affinity: the slot's primary node while it is healthy (or merely lagging), else the
   * next in the slot's fixed fallback sequence; retries walk the same sequence. Unhealthy
   * nodes are a last resort; ejected and drained ones are never chosen. With monotonic reads
   * a node that has not caught up with the nodes the key leaves is not chosen (WAIT).
   */
  private keyed(call: RouteRequest, tried: number, allowed: Uint8Array | null): UpstreamNode | null {
    const i = this.picker.pick(this.keyMap, this.mapNodes, call.slot, tried, allowed, this.previous, this.picker.monotonic ? this.levelOf(call) : 0);
    if (i === WAIT) this.waiting = true;
    return i < 0 ? null : this.mapNodes[i]!;
  }

  /**
   * route() found no node: a keyed call waits for a node to catch up (then 7505), a call of a
   * label-routed method with `fallback: none` gets the rule's 7503. False: the call's own error.
   */
  onNoNode(call: UpstreamCall): boolean {
    if (this.gate.refuse(call)) return true;
    if (this.freshWaiting) {
      this.freshWaiting = false;
      const fresh = this.fresh!;
      const first = this.waits.first;
      if (this.waits.park(call, fresh.waitMs(call), performance.now())) {
        if (first) fresh.tally(call.needSlot >= 0 ? FreshCause.WaitedContextSlot : FreshCause.WaitedBlockhash);
        return true;
      }
      call.freshExpired = true;
      fresh.tally(FreshCause.SentToFreshest);
      call.start();
      return true;
    }
    if (this.waiting) {
      this.waiting = false;
      const p = this.picker;
      const first = this.waits.first;
      if (this.waits.park(call, this.waitMs, performance.now())) {
        if (first) p.left?.mark.waited(p.reason);
        return true;
      }
      p.left?.mark.refused(p.reason);
      call.refuse(Errors.notCaughtUp, { slot: p.need, bestAvailable: p.best < 0 ? null : p.best });
      return true;
    }
    const rule = this.methodRules.size === 0 ? null : (this.methodRules.get(call.method) ?? null);
    if (rule === null || rule.fallbackAny || call.attempts > 0) return false;
    call.refuse(rule.error, rule.data);
    return true;
  }

  /** A node's error answer that another node may not give: true when the call goes on (answer-retry.ts). */
  retryAnswer(call: UpstreamCall, node: UpstreamNode, body: Buffer): boolean {
    return (
      this.gate.retryAnswer(this.nodes, this.maxAttempts, call, node, body) ??
      (this.fresh !== null && retryOnAnotherNode(this.fresh, this.nodes, this.archiveBits, this.maxAttempts, call, node, body))
    );
  }

  /**
   * A keyed call's answer raises its node's high-water mark at the call's level (no parse:
   * answer-slot.ts). When the call also went to other nodes (a retry, a hedge, a broadcast),
   * each of those not known to be at that slot is returning, like a node back from being down.
   * An answer without a slot (a sendTransaction signature) gave the key nothing to go back from.
   */
  answered(call: UpstreamCall): void {
    if (this.fresh !== null && call.method === 'getLatestBlockhash') learnBlockhash(call, call.node!, this.fresh);
    if (call.slot < 0 || !this.picker.monotonic) return;
    const node = call.node!;
    const s = answerSlot(call.response!, call.method === 'getSlot');
    if (s <= 0) return;
    const level = this.levelOf(call);
    node.mark.raise(s, level);
    if (call.attempts > 1) for (const n of this.nodes) if (n !== node && (n.bit & call.tried) !== 0 && knownAt(n, level) < s) n.mark.setReturning(true);
  }

  /** The level a keyed call's monotonic reads are kept at: its commitment on Solana (docs/solana-routing.md), else 0. */
  private levelOf(call: RouteRequest): number {
    return this.fresh === null || (call as Partial<FreshCall>).freshRead === undefined ? 0 : this.fresh.commitment(call as RouteRequest & FreshCall);
  }

  /**
   * After probes and operator changes: a node back from being unusable (or whose slot went
   * back: a restart) is returning until a probe finds it at or above every node's high-water
   * mark; the previous key map is let go once every usable node caught up with it; parked
   * calls are routed again.
   */
  refreshRouting(): void {
    let top = 0;
    for (const n of this.nodes) if (n.mark.slot > top) top = n.mark.slot;
    for (const n of this.nodes) {
      const now = usable(n);
      if (this.picker.monotonic && now && (!n.wasUsable || n.slot < n.lastProbedSlot)) n.mark.setReturning(true);
      // top 0: no key was served anything yet, so none can go back.
      if (n.mark.returning && now && (top === 0 || n.slot >= top)) n.mark.setReturning(false);
      n.wasUsable = now;
      n.lastProbedSlot = n.slot;
    }
    const prev = this.previous;
    if (prev !== null) {
      let floor = 0;
      for (const f of prev.floor) if (f > floor) floor = f;
      if (this.nodes.every((n) => !usable(n) || Math.max(n.slot, n.mark.slot) >= floor)) this.previous = null;
    }
    this.waits.wake();
  }

  /** Affinity key or client IP → slot. */
  slot(key: string): number {
    return this.hasher!.slot(key);
  }

  /** Rebuilds the key → node table after node or weight changes (only keys that must move do). */
  rebuildKeyMap(): void {
    this.keyMap = new KeyMap(this.nodes);
    this.mapNodes = this.nodes;
  }

  byId(id: string): UpstreamNode | undefined {
    return this.nodes.find((n) => n.id === id);
  }

  /** First probe round before traffic, then every interval. */
  async start(): Promise<void> {
    this.hasher = await KeyHasher.create(this.seed);
    if (this.probes) {
      await this.health.round();
      this.health.start();
      this.syncWatches();
    }
    this.rateTimer = setInterval(() => {
      const now = performance.now();
      for (const n of this.nodes) n.sampleRate(now);
    }, 1000);
    this.rateTimer.unref();
  }

  /** A data-plane worker takes the control plane's probe results (apply-health.ts). */
  applyHealth(nodes: readonly NodeHealthUpdate[]): void {
    applyHealthTo(this, nodes);
  }

  // ---- live changes (admin API, reload); they affect routing only from the next pick on ----

  /** Hook after weights, drains or the node set changed. */
  onTopologyChange(): void {
    const map = this.keyMap;
    const nodes = this.mapNodes;
    this.rebuildKeyMap();
    // Keys the change moves leave their old node only for one that caught up with it.
    if (this.picker.monotonic) this.previous = { map, nodes, floor: markFloor(nodes) };
    this.rebuildNodeRules();
    this.gate.configure(null, this.nodes);
    if (this.probes && this.hasher !== null) this.syncWatches();
    this.refreshRouting();
  }

  /** What follows the nodes' labels: label routing's rules and the archive nodes. */
  private rebuildNodeRules(): void {
    this.methodRules = buildMethodRules(this.methodConfig, this.nodes);
    this.archiveBits = archiveBitsOf(this.nodes);
  }

  /**
   * Reload, after replaceNodes(): where every per-node setting the file may change live is
   * applied, on the control plane and on every data-plane worker (each runs its own reload):
   * labels, expectLag, weight and drain (./node-settings.ts), then what is built from them.
   * Returns the weights the file changed.
   */
  applyNodeSettings(specs: readonly NodeSpec[], previous: readonly NodeSpec[]): Record<string, { from: number; to: number }> {
    const c = settleNodes(this.nodes, specs, previous);
    if (c.topology) this.onTopologyChange();
    else this.rebuildNodeRules();
    for (const n of c.drained) for (const l of this.unusableListeners) l(n);
    if (c.topology) for (const l of this.healthListeners) l();
    return c.weights;
  }

  /** One chain watch per node of a Solana pool, as the node set changes. */
  private syncWatches(): void {
    if (this.fresh !== null) this.watches.sync(this.chainWatch ? this.nodes : [], this.fresh.book, this.healthOpts);
  }

  /** The admin API's PATCH (./node-settings.ts). */
  setWeight(id: string, weight: number): UpstreamNode | undefined {
    return setByOperator(this, id, weight, null);
  }

  setDrained(id: string, drained: boolean): UpstreamNode | undefined {
    return setByOperator(this, id, null, drained);
  }

  /** Reload: attempts, eject policy and health probing (from the next round). */
  reconfigure(config: Config): void {
    const h = config.health;
    this.maxAttempts = config.routing.maxAttempts;
    this.picker.monotonic = config.affinity.monotonic;
    this.waitMs = config.affinity.monotonicWaitMs;
    if (this.fresh !== null) {
      this.fresh.minContextSlotWaitMs = config.routing.minContextSlotWaitMs;
      this.fresh.blockhashWaitMs = config.routing.blockhashWaitMs;
    }
    this.methodConfig = config.routing.methods;
    this.rebuildNodeRules();
    this.sendRank = sendRankOf(config);
    // Budgets, costs and method lists (matched by id) from the next pick on.
    this.gate.configure(config, this.nodes);
    this.clientOpts.connectTimeoutMs = Math.min(config.limits.upstreamTimeoutMs, 10_000);
    Object.assign(this.policy, { ejectAfterFailures: h.ejectAfterFailures, ejectBackoffMs: h.ejectBackoffMs, ejectBackoffMaxMs: h.ejectBackoffMaxMs });
    Object.assign(this.healthOpts, healthOptionsOf(config));
    this.chainWatch = h.chainWatch;
    if (this.probes && this.hasher !== null) this.syncWatches();
  }

  /**
   * Reload: makes the node set match `specs`, in their order. A node with the same id, url and
   * ws is kept as it is (pool, state, counters, settings: applyNodeSettings() follows). New
   * nodes, and nodes whose url or ws changed, are probed once before they take traffic. Nodes
   * that leave stop being routed at once (their WebSocket subscriptions move) and are closed
   * after their in-flight requests finish.
   */
  async replaceNodes(specs: readonly NodeSpec[]): Promise<NodeSetChange> {
    const { next, fresh, current } = await nextNodeSet(this.nodes, rpcNodes(specs), this.policy, this.clientOpts, this.healthOpts);
    const leaving = this.nodes.filter((n) => !next.includes(n));
    this.nodes = next;
    this.onTopologyChange();
    for (const n of leaving) {
      for (const l of this.unusableListeners) l(n);
      const closing: Promise<void> = n
        .close()
        .catch(() => n.destroy())
        .finally(() => this.retiring.delete(closing));
      this.retiring.add(closing);
    }
    return {
      added: [...fresh.keys()].filter((id) => !current.has(id)),
      removed: leaving.filter((n) => !fresh.has(n.id)).map((n) => n.id),
      replaced: [...fresh.keys()].filter((id) => current.has(id)),
    };
  }

  async close(): Promise<void> {
    this.health.stop();
    this.watches.stop();
    this.waits.close();
    if (this.rateTimer !== null) clearInterval(this.rateTimer);
    await Promise.all([...this.nodes.map((n) => n.close().catch(() => n.destroy())), ...this.retiring]);
  }
}
