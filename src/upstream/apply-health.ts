// A data-plane worker takes the control plane's probe results (planes/worker-main.ts): one
// prober for every worker. A node this worker ejected stays out until its own backoff ends,
// even if a result sent before the control plane heard of the ejection says otherwise.

import { answersProbes } from '../routing/node-view.js';
import type { FreshRouting } from '../solana/fresh-routing.js';
import type { NodeHealthUpdate } from './health.js';
import type { UpstreamNode } from './node.js';

/** What applying results touches of the node pool. */
export interface HealthTarget {
  byId(id: string): UpstreamNode | undefined;
  readonly fresh: FreshRouting | null;
  readonly unusableListeners: ((node: UpstreamNode) => void)[];
  onTopologyChange(): void;
  refreshRouting(): void;
}

export function applyHealthTo(pool: HealthTarget, nodes: readonly NodeHealthUpdate[]): void {
  const now = Date.now();
  let topology = false;
  for (const h of nodes) {
    const n = pool.byId(h.id);
    if (n === undefined) continue;
    if (h.mark !== undefined) n.mark.attach(h.mark);
    if (h.chain !== undefined) n.chain.attach(h.chain);
    if (h.rank !== undefined) n.rank.attach(h.rank);
    if (h.book !== undefined && h.freshCounts !== undefined && pool.fresh !== null) pool.fresh.attachBook(h.book, h.freshCounts);
    n.slot = h.slot;
    // As the prober seeds an inline node's latency (see health.ts seedLatency).
    if (n.requests === 0 && h.probeMs > 0) n.ewmaMs = h.probeMs;
    if (n.weight !== h.weight || n.drained !== h.drained) {
      const draining = h.drained && !n.drained;
      n.weight = h.weight;
      n.drained = h.drained;
      topology = true;
      if (draining) for (const l of pool.unusableListeners) l(n);
    }
    if (n.state === h.state || (n.state === 'ejected' && now < n.ejectedUntil)) continue;
    const before = n.state;
    n.state = h.state;
    if (h.state === 'ejected') n.ejectedUntil = h.ejectedUntil;
    else if (before === 'ejected') n.readmit();
    if (!answersProbes(n)) for (const l of pool.unusableListeners) l(n);
  }
  if (topology) pool.onTopologyChange();
  else pool.refreshRouting();
}
