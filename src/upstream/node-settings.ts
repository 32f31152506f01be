// A reload's per-node settings (docs/configuration.md "Reload"), for nodes the new node set kept:
// labels and expectLag as the file says; a weight only when the file changed it (a weight set
// through the admin API since is kept otherwise), weight 0 draining and leaving 0 undraining as
// a PATCH does. NodePool.applyNodeSettings rebuilds what depends on them.

import { wsUrlOf, type NodeSpec, type UpstreamNode } from './node.js';
import type { NodePool } from './pool.js';

export interface NodeSettingsChange {
  /** Weights the file changed, by id, as they were and are now. */
  weights: Record<string, { from: number; to: number }>;
  /** Nodes drained by this change (their WebSocket subscriptions move). */
  drained: UpstreamNode[];
  /** A weight or drain changed: the key map is rebuilt. */
  topology: boolean;
}

/** Sets `specs`' settings on the nodes of `nodes` with the same id, url and ws; `previous`: the file's nodes before. */
export function settleNodes(nodes: readonly UpstreamNode[], specs: readonly NodeSpec[], previous: readonly NodeSpec[]): NodeSettingsChange {
  const before = new Map(previous.map((s) => [s.id, s]));
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const out: NodeSettingsChange = { weights: {}, drained: [], topology: false };
  for (const spec of specs) {
    const node = byId.get(spec.id);
    if (node === undefined || node.url !== spec.url || node.wsUrl !== wsUrlOf(spec)) continue;
    node.labels = spec.labels;
    node.expectLag = spec.expectLag === true;
    const old = before.get(spec.id);
    if (old === undefined || old.weight === spec.weight) continue;
    // A node made from this spec (added, or a new url) already has its weight and drain.
    if (spec.weight === 0 && !node.drained) {
      node.drained = true;
      out.drained.push(node);
      out.topology = true;
    } else if (old.weight === 0 && spec.weight > 0 && node.drained) {
      node.drained = false;
      out.topology = true;
    }
    if (node.weight === spec.weight) continue;
    out.weights[spec.id] = { from: node.weight, to: spec.weight };
    node.weight = spec.weight;
    out.topology = true;
  }
  return out;
}

/** An operator's change through the admin API: a weight or a drain, applied at once; undefined when no node has `id`. */
export function setByOperator(pool: NodePool, id: string, weight: number | null, drained: boolean | null): UpstreamNode | undefined {
  const n = pool.byId(id);
  if (n === undefined) return undefined;
  if (weight !== null) n.weight = weight;
  if (drained !== null) n.drained = drained;
  pool.onTopologyChange();
  if (drained === true) for (const l of pool.unusableListeners) l(n);
  for (const l of pool.healthListeners) l();
  return n;
}
