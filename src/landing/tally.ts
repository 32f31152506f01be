// A data plane's landing counts since its last report (docs/landing.md "Figures"), per node,
// per token and per token and node: the tracker adds here as transactions are sent and end, and
// the report (a worker's once a second, or the inline plane's timer) drains it. The per token
// and node cells are looked up through two maps rather than a joined key, so counting a send
// makes no string.

import { emptyCounts, slotBucket, type LandingCounts, type LandingDelta } from './counts.js';
import type { RankSamples } from './ranking.js';

/** What a count is of (the LandingCounts field it adds to). */
export type Outcome = 'landed' | 'expired' | 'failed' | 'untracked';

export class LandingTally {
  private nodes = new Map<string, LandingCounts>();
  private tokens = new Map<string, LandingCounts>();
  private tokenNodes = new Map<string, Map<string, LandingCounts>>();
  /** Per node: samples for the send ranking (ranking.ts). */
  private ranks = new Map<string, RankSamples>();
  private empty = true;

  private cell(map: Map<string, LandingCounts>, key: string): LandingCounts {
    let c = map.get(key);
    if (c === undefined) map.set(key, (c = emptyCounts()));
    this.empty = false;
    return c;
  }

  private pair(token: string, node: string): LandingCounts {
    let nodes = this.tokenNodes.get(token);
    if (nodes === undefined) this.tokenNodes.set(token, (nodes = new Map()));
    return this.cell(nodes, node);
  }

  /** A node accepted `token`'s transaction for the first time (its first send, a broadcast copy, or a resend to a new node). */
  sentTo(node: string, token: string): void {
    this.cell(this.nodes, node).sent++;
    this.pair(token, node).sent++;
  }

  /** A token's transaction was accepted (counted once, whatever number of nodes took it). */
  sentFor(token: string): void {
    this.cell(this.tokens, token).sent++;
  }

  resent(node: string, token: string): void {
    this.cell(this.nodes, node).resent++;
    this.cell(this.tokens, token).resent++;
    this.pair(token, node).resent++;
  }

  /** A tracked transaction ended: counted for each node it went to and for its token; `slots` when it landed or failed. */
  ended(outcome: Outcome, nodes: readonly string[], token: string, slots: number): void {
    const bucket = outcome === 'landed' || outcome === 'failed' ? slotBucket(slots) : -1;
    for (const n of nodes) {
      this.count(this.cell(this.nodes, n), outcome, bucket);
      this.count(this.pair(token, n), outcome, bucket);
    }
    this.count(this.cell(this.tokens, token), outcome, bucket);
  }

  /** A tracked transaction's ranking outcome, once: seen in a block within overdueSlots (taking `slots`), or not. */
  ranked(nodes: readonly string[], inTime: boolean, slots: number): void {
    for (const n of nodes) {
      let r = this.ranks.get(n);
      if (r === undefined) this.ranks.set(n, (r = { inTime: 0, late: 0, slots: 0 }));
      if (inTime) {
        r.inTime++;
        r.slots += Math.max(0, slots);
      } else r.late++;
    }
    this.empty = false;
  }

  private count(c: LandingCounts, outcome: Outcome, bucket: number): void {
    c[outcome]++;
    if (bucket >= 0) c.slots[bucket]!++;
  }

  /** Everything since the last drain, or null when nothing happened; starts from zero again. */
  drain(): LandingDelta | null {
    if (this.empty) return null;
    const tokenNodes: Record<string, Record<string, LandingCounts>> = {};
    for (const [token, nodes] of this.tokenNodes) tokenNodes[token] = Object.fromEntries(nodes);
    const out: LandingDelta = { nodes: Object.fromEntries(this.nodes), tokens: Object.fromEntries(this.tokens), tokenNodes };
    if (this.ranks.size > 0) out.rank = Object.fromEntries(this.ranks);
    this.ranks = new Map();
    this.nodes = new Map();
    this.tokens = new Map();
    this.tokenNodes = new Map();
    this.empty = true;
    return out;
  }
}
