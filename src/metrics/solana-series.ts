// Prometheus series of Solana routing (docs/solana-routing.md): each node's slot and lag per
// commitment and the fresh-state routing counters, read at scrape time from shared memory.

import type { Metric } from 'prom-client';
import type { NodeView } from '../routing/node-view.js';
import { COMMITMENT_NAMES, freshestSlots, lagAt, type ChainView } from '../solana/chain-view.js';
import { FRESH_CAUSES } from '../solana/fresh-routing.js';
import { computed, type Sample } from './computed.js';

export function solanaSeries(
  nodes: () => readonly (NodeView & { readonly chain?: ChainView })[],
  fresh: () => { count(cause: number): number } | null,
): Metric[] {
  return [
    computed('jumpgate_node_commitment_slot', "The node's slot at a commitment, from its slot stream and polls (0 unknown)", 'gauge', () => {
      const out: Sample[] = [];
      for (const n of nodes()) {
        if (n.chain === undefined) continue;
        for (let c = 0; c < COMMITMENT_NAMES.length; c++) out.push({ labels: { node: n.id, commitment: COMMITMENT_NAMES[c]! }, value: n.chain.slot(c) });
      }
      return out;
    }),
    computed('jumpgate_node_commitment_lag_slots', 'Slots the node is behind the freshest node at a commitment (no sample while unknown)', 'gauge', () => {
      const out: Sample[] = [];
      const all = nodes();
      const best = freshestSlots(all);
      for (const n of all) {
        if (n.chain === undefined) continue;
        for (let c = 0; c < COMMITMENT_NAMES.length; c++) {
          const lag = lagAt(n.chain, best, c);
          if (lag !== null) out.push({ labels: { node: n.id, commitment: COMMITMENT_NAMES[c]! }, value: lag });
        }
      }
      return out;
    }),
    computed('jumpgate_fresh_routing_total', 'Fresh-state routing by cause (docs/solana-routing.md)', 'counter', () => {
      const f = fresh();
      return f === null ? [] : FRESH_CAUSES.map((cause, i) => ({ labels: { cause }, value: f.count(i) }));
    }),
  ];
}
