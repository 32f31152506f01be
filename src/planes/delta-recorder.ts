// A data-plane worker's request counters: the same calls the Prometheus exporter takes on the
// hot path, kept as counts since the last report (nested maps of cells, no key built per
// request) and handed to the control plane once a second, where the one exporter adds them up.

import { Buckets } from '../metrics/latency-buckets.js';
import type { CallEvent, RequestRecorder } from '../metrics/recorder.js';
import type { RequestDelta } from './messages.js';

class Cell {
  n = 0;
}

/** method → batch flag → status line → node label → count */
type Counts = Map<string, [Map<string, Map<string, Cell>>, Map<string, Map<string, Cell>>]>;

export class DeltaRecorder implements RequestRecorder {
  private counts: Counts = new Map();
  private duration = new Buckets();
  private limited = new Map<string, number>();
  private callEvents = new Map<string, number>();

  request(method: string, batch: boolean, status: string, nodeIds: string, ms: number): void {
    let pair = this.counts.get(method);
    if (pair === undefined) this.counts.set(method, (pair = [new Map(), new Map()]));
    const byStatus = pair[batch ? 1 : 0];
    let byNode = byStatus.get(status);
    if (byNode === undefined) byStatus.set(status, (byNode = new Map()));
    let cell = byNode.get(nodeIds);
    if (cell === undefined) byNode.set(nodeIds, (cell = new Cell()));
    cell.n++;
    this.duration.observeMs(ms);
  }

  rateLimited(scope: string): void {
    this.limited.set(scope, (this.limited.get(scope) ?? 0) + 1);
  }

  callEvent(kind: CallEvent): void {
    this.callEvents.set(kind, (this.callEvents.get(kind) ?? 0) + 1);
  }

  /** Everything since the last drain; the recorder starts from zero again. */
  drain(): { requests: RequestDelta[]; duration: number[]; durationSumMs: number; rateLimited: Record<string, number>; callEvents: Record<string, number> } {
    const requests: RequestDelta[] = [];
    for (const [method, pair] of this.counts) {
      for (let b = 0; b < 2; b++) {
        for (const [status, byNode] of pair[b]!) {
          for (const [nodeIds, cell] of byNode) requests.push({ method, batch: b === 1, status, nodeIds, count: cell.n });
        }
      }
    }
    const out = {
      requests,
      duration: Array.from(this.duration.counts),
      durationSumMs: this.duration.sumMs,
      rateLimited: Object.fromEntries(this.limited),
      callEvents: Object.fromEntries(this.callEvents),
    };
    this.counts = new Map();
    this.duration = new Buckets();
    this.limited = new Map();
    this.callEvents = new Map();
    return out;
  }
}
