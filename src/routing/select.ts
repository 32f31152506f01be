// Default routing (docs/routing.md "Retries and node health"): healthy non-lagging nodes first, then lagging, then unhealthy;
// within a tier, power of two distinct choices drawn by weight, the lower of
// EWMA latency × (in-flight + 1) / weight wins.

import { inTier, type NodeStateName, type NodeView } from './node-view.js';

/** Tiers in order of preference; ejected nodes are in none (they wait for their half-open probe). */
const TIERS: readonly NodeStateName[] = ['healthy', 'lagging', 'unhealthy'];

function weightedPick<N extends NodeView>(nodes: readonly N[], tier: NodeStateName, exclude: number, total: number): N {
  let r = Math.random() * total;
  let last: N | null = null;
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i]!;
    if (!inTier(n, tier, exclude)) continue;
    last = n;
    r -= n.weight;
    if (r < 0) return n;
  }
  return last!;
}

/** Lower is better. Weight divides the score too: the draw alone would lose the operator's
 * weights whenever only two nodes are eligible (both are always drawn). */
function score(n: NodeView): number {
  return (n.ewmaMs * (n.inflight + 1)) / n.weight;
}

/** Best node not in `exclude` (bitmask of NodeView.bit), or null when none is usable. */
export function pickNode<N extends NodeView>(nodes: readonly N[], exclude: number): N | null {
  for (let t = 0; t < TIERS.length; t++) {
    const tier = TIERS[t]!;
    let total = 0;
    let count = 0;
    for (let i = 0; i < nodes.length; i++) {
      const n = nodes[i]!;
      if (inTier(n, tier, exclude)) {
        total += n.weight;
        count++;
      }
    }
    if (count === 0) continue;
    const a = weightedPick(nodes, tier, exclude, total);
    if (count === 1) return a;
    // Two distinct candidates: drawing the same node twice would send it traffic however
    // slow it is.
    const b = weightedPick(nodes, tier, exclude | a.bit, total - a.weight);
    return score(b) < score(a) ? b : a;
  }
  return null;
}
