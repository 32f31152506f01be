// Prometheus series of client WebSockets (docs/admin-api.md lists them): connections, distinct
// subscriptions, the upstream subscriptions held per node, and which node's copy of a redundant
// subscription's notification went out first (docs/reliability.md "Redundant WebSocket
// subscriptions"); read at scrape time from the data plane's figures.

import type { Metric } from 'prom-client';
import { computed, type Sample } from './computed.js';

/** Client WebSockets, the distinct subscriptions they share, upstream subscriptions per node. */
export interface WsFigures {
  connections: number;
  sharedSubscriptions: number;
  upstreamSubscriptions: Record<string, number>;
  redundancy: Record<string, { first: number; dropped: number }>;
}

export function wsSeries(ws: () => WsFigures | null): Metric[] {
  const out: Metric[] = [
    computed('jumpgate_ws_connections', 'Client WebSocket connections open', 'gauge', () => [{ labels: {}, value: ws()?.connections ?? 0 }]),
    computed('jumpgate_ws_subscriptions', 'Distinct client subscriptions (identical ones on a data-plane worker count once)', 'gauge', () => [
      { labels: {}, value: ws()?.sharedSubscriptions ?? 0 },
    ]),
    computed('jumpgate_ws_upstream_subscriptions', 'Subscriptions held on the node on behalf of clients', 'gauge', () =>
      Object.entries(ws()?.upstreamSubscriptions ?? {}).map(([node, value]) => ({ labels: { node }, value })),
    ),
  ];
  for (const which of ['first', 'dropped'] as const) {
    const help = which === 'first' ? 'Notifications of redundant subscriptions the node delivered first' : "The node's copies dropped as duplicate or late";
    const samples = (): Sample[] => Object.entries(ws()?.redundancy ?? {}).map(([node, c]) => ({ labels: { node }, value: c[which] }));
    out.push(computed(`jumpgate_ws_notifications_${which}_total`, help, 'counter', samples));
  }
  return out;
}
