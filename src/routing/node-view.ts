// When a node is usable, and for what (docs/routing.md "Retries and node health"). Routing, the keyed
// router, the health loop, subscription placement, readiness and the exporters all ask these
// functions, so each rule is written once. They read a plain NodeView (no sockets), so
// routing can be driven in tests with plain objects. Called per pick: no allocation here.

export const NODE_STATES = ['healthy', 'lagging', 'unhealthy', 'ejected'] as const;

export type NodeStateName = (typeof NODE_STATES)[number];

/** What the rules read of a node. */
export interface NodeView {
  readonly id: string;
  /** Bit in a request's tried-nodes mask. */
  readonly bit: number;
  readonly state: NodeStateName;
  readonly drained: boolean;
  readonly weight: number;
  /** Last slot (block number) a probe reported; -1 until known. */
  readonly slot: number;
  readonly ewmaMs: number;
  readonly inflight: number;
}

/** The operator lets it take traffic. Drained and weight-0 nodes take none whatever their
 * health: the operator took them out on purpose (maintenance, a node being replaced). */
export function takesTraffic(n: NodeView): boolean {
  return !n.drained && n.weight > 0;
}

/** Its last probe succeeded (healthy or lagging). Only such a node's slot is current, so only
 * these count toward the best slot, and only these get subscriptions and keyed traffic first. */
export function answersProbes(n: NodeView): boolean {
  return n.state === 'healthy' || n.state === 'lagging';
}

/** Can take new traffic at all (admin `routable`): an unhealthy node is still a last resort
 * (its probe may fail while requests succeed), an ejected one waits for its half-open probe. */
export function routable(n: NodeView): boolean {
  return takesTraffic(n) && n.state !== 'ejected';
}

/** Preferred for traffic: answers probes and the operator lets it take traffic. Readiness
 * counts these: a gateway with only last-resort nodes should not get new clients. */
export function usable(n: NodeView): boolean {
  return takesTraffic(n) && answersProbes(n);
}

/** May be picked in routing tier `tier` by a request that already tried the nodes in
 * `exclude` (bitmask of NodeView.bit): a retry never goes back to a node that failed it. */
export function inTier(n: NodeView, tier: NodeStateName, exclude: number): boolean {
  return n.state === tier && takesTraffic(n) && (n.bit & exclude) === 0;
}

/** Highest slot among nodes that answer probes; -1 if none. An unhealthy or ejected node's
 * slot is stale, and counting it could make every live node look lagging. */
export function bestSlot(nodes: readonly NodeView[]): number {
  let best = -1;
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i]!;
    if (n.slot > best && answersProbes(n)) best = n.slot;
  }
  return best;
}

/** Slots behind the best node; null while the node's slot (or any slot) is unknown. */
export function slotLag(n: NodeView, best: number): number | null {
  if (n.slot < 0 || best < 0) return null;
  return Math.max(0, best - n.slot);
}

/** The state of a node whose probe answered `slot`: lagging beyond `maxSlotLag` behind the
 * best, since its answers would be stale (clients see old blocks). */
export function probedState(slot: number, best: number, maxSlotLag: number): 'healthy' | 'lagging' {
  return best - slot > maxSlotLag ? 'lagging' : 'healthy';
}
