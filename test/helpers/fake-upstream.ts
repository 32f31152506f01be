// Fakes for the upstream side of a call: nodes whose client only records attempts (the test
// ends each one), and a router over them. No sockets, no timers but the attempts' own.

import { NodeBudget } from '../../src/routing/budget.js';
import type { UpstreamCall } from '../../src/upstream/call.js';
import { MethodLatency, type Router } from '../../src/upstream/router.js';
import type { UpstreamNode } from '../../src/upstream/node.js';
import type { AttemptSink, UpstreamClient } from '../../src/upstream/transport.js';

export class FakeClient implements UpstreamClient {
  readonly streams = false;
  readonly attempts: AttemptSink[] = [];
  /** What abandon() answers: true = the request was never written (a connect timeout). */
  neverWritten = false;
  /** Answers each attempt as it is sent (after a microtask, as a real client would never answer inside send). */
  auto: ((body: Buffer) => [number, Buffer]) | null = null;

  send(a: AttemptSink): void {
    this.attempts.push(a);
    const auto = this.auto;
    if (auto === null) return;
    queueMicrotask(() => {
      const [status, body] = auto(a.body);
      a.answered(status, body);
    });
  }

  abandon(): boolean {
    return this.neverWritten;
  }

  /** A fake may hold whatever it was sent: bodies are never reused. */
  keepsBody(): boolean {
    return true;
  }

  /** Attempts taken back before being written (a hedge answered first). */
  readonly withdrawn: AttemptSink[] = [];
  /** What withdraw() answers: true = the attempt was still queued. */
  queued = false;

  withdraw(a: AttemptSink): boolean {
    if (this.queued) this.withdrawn.push(a);
    return this.queued;
  }

  /** Attempts not ended yet. */
  open(): AttemptSink[] {
    return this.attempts.filter((a) => !a.done);
  }

  async close(): Promise<void> {}
  async destroy(): Promise<void> {}
}

/** What call.ts reads and writes of a node. */
export interface FakeNode {
  readonly id: string;
  readonly bit: number;
  readonly client: FakeClient;
  inflight: number;
  requests: number;
  usable: boolean;
  /** What routing/node-view.ts reads (broadcasts and hedges go only to usable nodes). */
  state: 'healthy' | 'unhealthy';
  drained: boolean;
  weight: number;
  /** Unlimited: a call spends on it and a 429 cools it (routing/budget.ts). */
  budget: NodeBudget;
  successes: number;
  failures: string[];
  recordSuccess(ms: number, now: number): void;
  recordFailure(reason: string, now: number): void;
}

export function fakeNode(id: string, index: number): FakeNode {
  return {
    id,
    bit: 1 << index,
    client: new FakeClient(),
    inflight: 0,
    requests: 0,
    usable: true,
    state: 'healthy',
    drained: false,
    weight: 1,
    budget: new NodeBudget(),
    successes: 0,
    failures: [],
    recordSuccess() {
      this.successes++;
    },
    recordFailure(reason) {
      this.failures.push(reason);
    },
  };
}

/** Routes to the first usable node the call has not tried, in list order. */
export class FakeRouter implements Router {
  readonly nodes: FakeNode[];
  readonly methodLatency = new MethodLatency(1_000_000);
  /** Every call routed, with the slot it asked for. */
  readonly slots: number[] = [];

  constructor(
    count: number,
    public maxAttempts = 3,
  ) {
    this.nodes = Array.from({ length: count }, (_, i) => fakeNode(`n${i}`, i));
  }

  route(call: UpstreamCall): UpstreamNode | null {
    this.slots.push(call.slot);
    for (const n of this.nodes) if (n.usable && (n.bit & call.tried) === 0) return n as unknown as UpstreamNode;
    return null;
  }

  /** Every attempt sent so far, over all nodes. */
  attempts(): AttemptSink[] {
    return this.nodes.flatMap((n) => n.client.attempts);
  }
}

/**
 * A node's answer to a request body: each call gets `"result": "<method>"` under its own
 * id (sub-batch ids are element positions), notifications get nothing.
 */
export function echoAnswer(body: Buffer): [number, Buffer] {
  const parsed = JSON.parse(body.toString()) as { id?: unknown; method: string } | { id?: unknown; method: string }[];
  const one = (c: { id?: unknown; method: string }): string => JSON.stringify({ jsonrpc: '2.0', id: c.id, result: c.method });
  if (!Array.isArray(parsed)) return [200, Buffer.from('id' in parsed ? one(parsed) : '')];
  return [
    200,
    Buffer.from(
      '[' +
        parsed
          .filter((c) => 'id' in c)
          .map(one)
          .join(',') +
        ']',
    ),
  ];
}
