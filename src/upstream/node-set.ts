// A reload's new node set (docs/configuration.md "Reload"): nodes whose id, url and ws stay are
// kept as they are (pool, state, counters; NodePool.applyNodeSettings then applies their other
// settings); new nodes, and nodes whose url or ws changed, get a free bit and are probed once
// before they take traffic.

import { applyProbe, bestSlotAfterProbes, probe, type HealthOptions } from './health.js';
import { UpstreamNode, wsUrlOf, type ClientOptions, type EjectPolicy, type NodeSpec } from './node.js';

/** What a reload did to the node set, by id. */
export interface NodeSetChange {
  added: string[];
  removed: string[];
  /** Same id, new url or ws: a new connection pool; the old one finishes its in-flight requests. */
  replaced: string[];
}

/** The nodes for `specs`, in their order: kept ones reused, the others made and probed. */
export async function nextNodeSet(
  nodes: readonly UpstreamNode[],
  specs: readonly NodeSpec[],
  policy: EjectPolicy,
  clientOpts: ClientOptions,
  healthOpts: HealthOptions,
): Promise<{ next: UpstreamNode[]; fresh: Map<string, UpstreamNode>; current: Map<string, UpstreamNode> }> {
  const current = new Map(nodes.map((n) => [n.id, n]));
  const kept = new Set<UpstreamNode>();
  for (const s of specs) {
    const n = current.get(s.id);
    if (n !== undefined && n.url === s.url && n.wsUrl === wsUrlOf(s)) kept.add(n);
  }
  const usedBits = new Set([...kept].map((n) => 31 - Math.clz32(n.bit)));
  const fresh = new Map<string, UpstreamNode>();
  for (const s of specs) {
    const n = current.get(s.id);
    if (n !== undefined && kept.has(n)) continue;
    let index = 0;
    while (index < 31 && usedBits.has(index)) index++;
    usedBits.add(index);
    fresh.set(s.id, new UpstreamNode(s, index, policy, clientOpts));
  }
  const results = await Promise.all([...fresh.values()].map((n) => probe(n, healthOpts)));
  const best = bestSlotAfterProbes([...kept], results);
  [...fresh.values()].forEach((n, i) => applyProbe(n, results[i]!, best, healthOpts.maxSlotLag));
  return { next: specs.map((s) => fresh.get(s.id) ?? current.get(s.id)!), fresh, current };
}
