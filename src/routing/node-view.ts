// Derived node figures shared by the admin API and the Prometheus exporter.

import type { UpstreamNode } from '../upstream/node.js';

export const NODE_STATES = ['healthy', 'lagging', 'unhealthy', 'ejected'] as const;

/** Highest slot among nodes that answer probes (as the health loop counts it); -1 if none. */
export function bestSlot(nodes: readonly UpstreamNode[]): number {
  let best = -1;
  for (const n of nodes) if (n.slot > best && n.state !== 'ejected' && n.state !== 'unhealthy') best = n.slot;
  return best;
}

/** Slots behind the best node; null while the node's slot is unknown. */
export function slotLag(node: UpstreamNode, best: number): number | null {
  if (node.slot < 0 || best < 0) return null;
  return Math.max(0, best - node.slot);
}
