// Prometheus series of what each node costs (docs/routing.md "Provider budgets"): calls,
// credits, 429s, cooldowns and learned exclusions since start, and the effective rate of nodes
// with a budget; read at scrape time from the nodes' budgets.

import type { Metric } from 'prom-client';
import type { NodeBudget } from '../routing/budget.js';
import { computed, type Sample } from './computed.js';

/** What the series read of a node. */
export interface BudgetedNode {
  readonly id: string;
  readonly budget?: NodeBudget;
}

export function budgetSeries(nodes: () => readonly BudgetedNode[]): Metric[] {
  const series = (name: string, help: string, type: 'counter' | 'gauge', value: (b: NodeBudget) => number, onlyCapped = false): Metric =>
    computed(name, help, type, () => {
      const out: Sample[] = [];
      for (const n of nodes()) {
        const b = n.budget;
        if (b !== undefined && (!onlyCapped || b.rate !== Infinity)) out.push({ labels: { node: n.id }, value: value(b) });
      }
      return out;
    });
  return [
    series('jumpgate_node_calls_total', 'Calls sent to the node (batch elements count)', 'counter', (b) => b.calls),
    series('jumpgate_node_credits_total', "Credits spent on the node's provider (nodes[].budget.costs; 1 a call otherwise)", 'counter', (b) => b.credits),
    series('jumpgate_node_rate_limited_total', 'Attempts the node answered HTTP 429', 'counter', (b) => b.limited),
    series('jumpgate_node_cooldowns_total', 'Times the node began cooling down after a 429', 'counter', (b) => b.cooldowns),
    series('jumpgate_node_unsupported_learned_total', 'Methods the node was found not to serve (-32601 or a provider code)', 'counter', (b) => b.learned),
    series(
      'jumpgate_node_budget_effective_rate',
      "Credits per second the gateway spends at most on the node (its budget's rate, lowered after repeated 429s)",
      'gauge',
      (b) => b.effRate / b.share,
      true,
    ),
  ];
}
