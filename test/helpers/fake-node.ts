// Plain nodes for routing and subscription tests: every field the node rules read
// (src/routing/node-view.ts), plus the WebSocket URL the subscription hub reads; no sockets.

import type { NodeStateName, NodeView } from '../../src/routing/node-view.js';

export interface FakeNodeSpec {
  weight?: number;
  state?: NodeStateName;
  drained?: boolean;
  slot?: number;
  ewmaMs?: number;
  inflight?: number;
}

export class FakeNode implements NodeView {
  readonly id: string;
  readonly bit: number;
  readonly wsUrl: string;
  state: NodeStateName;
  drained: boolean;
  weight: number;
  slot: number;
  ewmaMs: number;
  inflight: number;

  constructor(index: number, spec: FakeNodeSpec = {}) {
    this.id = `n${index}`;
    this.bit = 1 << Math.min(index, 31);
    this.wsUrl = `ws://node-${index}.invalid`;
    this.state = spec.state ?? 'healthy';
    this.drained = spec.drained ?? false;
    this.weight = spec.weight ?? 1;
    this.slot = spec.slot ?? -1;
    this.ewmaMs = spec.ewmaMs ?? 1;
    this.inflight = spec.inflight ?? 0;
  }
}

/** Nodes n0, n1, … from their specs. */
export function fakeNodes(specs: readonly FakeNodeSpec[]): FakeNode[] {
  return specs.map((s, i) => new FakeNode(i, s));
}
