// The control plane's send ranking (docs/landing.md "Sends go where they land"): every data
// plane reports, per node, how many of its recent sends were seen in a block within
// `overdueSlots` and how many were not (overdue, or expired first), with the slots they took.
// Those samples decay with a half-life, so the ranking follows what nodes do now; each node's
// score is written into its rank cell (routing/send-rank.ts), which every data plane's router
// reads on a send.

import type { Config } from '../config/schema.js';
import { RANK_INCLUDED, RANK_POSITION, RANK_SAMPLES, RANK_SCORE, RANK_SLOTS, type RankCell } from '../routing/send-rank.js';

export type RankingSettings = Config['routing']['landing']['ranking'];

/** One data plane's samples for one node since its last report. */
export interface RankSamples {
  /** Seen in a block within overdueSlots of the send. */
  inTime: number;
  /** Not seen within overdueSlots (late, or expired before). */
  late: number;
  /** Sum of the slots the in-time ones took. */
  slots: number;
}

/** What a node's rank shows (GET /admin/landing "ranking"). */
export interface RankView {
  position: number | null;
  score: number | null;
  samples: number;
  includedPct: number | null;
  meanSlots: number | null;
  /** Why it is where it is, in words. */
  reason: string;
}

interface Decayed {
  inTime: number;
  late: number;
  slots: number;
  at: number;
}

interface Cells {
  readonly id: string;
  readonly rank: RankCell;
}

/** Samples of one node id are kept at most for this many ids (node ids come from the config). */
const MAX_NODES = 1024;

export class SendRanking {
  private readonly byNode = new Map<string, Decayed>();

  constructor(
    /** The settings as they are now (a reload may change them). */
    private readonly current: () => RankingSettings,
    /** The control plane's nodes as they are now (a reload may change them). */
    private readonly nodes: () => readonly Cells[],
    private readonly now: () => number = Date.now,
  ) {}

  private get settings(): RankingSettings {
    return this.current();
  }

  /** Adds one report's samples and rewrites every node's cell. */
  add(samples: Record<string, RankSamples> | undefined): void {
    const now = this.now();
    if (typeof samples === 'object' && samples !== null) {
      for (const [id, s] of Object.entries(samples)) {
        if (!wellFormed(s)) continue;
        let d = this.byNode.get(id);
        if (d === undefined) {
          if (this.byNode.size >= MAX_NODES) continue;
          this.byNode.set(id, (d = { inTime: 0, late: 0, slots: 0, at: now }));
        }
        this.decay(d, now);
        d.inTime += s.inTime;
        d.late += s.late;
        d.slots += s.slots;
      }
    }
    this.publish(now);
  }

  private decay(d: Decayed, now: number): void {
    if (now <= d.at) return;
    const f = Math.pow(0.5, (now - d.at) / this.settings.halfLifeMs);
    d.inTime *= f;
    d.late *= f;
    d.slots *= f;
    d.at = now;
  }

  /** Score: the share seen in time (with one success and one miss assumed, so few samples stay modest), less slotWeight per mean slot. */
  private score(d: Decayed): number {
    return (d.inTime + 1) / (d.inTime + d.late + 2) - this.settings.slotWeight * meanSlots(d);
  }

  /** Writes each node's score, samples and position into its cell. */
  publish(now: number = this.now()): void {
    const nodes = this.nodes();
    const ranked: { cell: RankCell; score: number }[] = [];
    for (const n of nodes) {
      const d = this.byNode.get(n.id);
      if (d !== undefined) this.decay(d, now);
      const samples = d === undefined ? 0 : d.inTime + d.late;
      const cell = n.rank;
      cell.set(RANK_SAMPLES, samples);
      cell.set(RANK_INCLUDED, d === undefined || samples === 0 ? 0 : d.inTime / samples);
      cell.set(RANK_SLOTS, d === undefined ? 0 : meanSlots(d));
      const score = d === undefined ? 0 : this.score(d);
      cell.set(RANK_SCORE, score);
      cell.set(RANK_POSITION, 0);
      if (samples >= this.settings.minSamples) ranked.push({ cell, score });
    }
    ranked.sort((a, b) => b.score - a.score);
    ranked.forEach((r, i) => r.cell.set(RANK_POSITION, i + 1));
  }

  /** Per node id, for the console: where it ranks and why, without the samples (they count every account's sends). */
  shown(): Record<string, RankShown> {
    const out: Record<string, RankShown> = {};
    for (const [id, v] of Object.entries(this.view())) {
      const reason = v.position === null ? `exploring: ranked from ${this.settings.minSamples} recent outcomes` : v.reason;
      out[id] = { position: v.position, includedPct: v.includedPct, meanSlots: v.meanSlots, reason };
    }
    return out;
  }

  /** Per node id: where it ranks and why. */
  view(): Record<string, RankView> {
    this.publish();
    const out: Record<string, RankView> = {};
    const s = this.settings;
    for (const n of this.nodes()) {
      const c = n.rank;
      const samples = c.get(RANK_SAMPLES);
      const position = c.get(RANK_POSITION);
      const seen = samples > 0;
      const included = Math.round(1000 * c.get(RANK_INCLUDED)) / 10;
      const slots = Math.round(10 * c.get(RANK_SLOTS)) / 10;
      out[n.id] = {
        position: position > 0 ? position : null,
        score: seen ? Math.round(1000 * c.get(RANK_SCORE)) / 1000 : null,
        samples: Math.round(samples * 10) / 10,
        includedPct: seen ? included : null,
        meanSlots: seen ? slots : null,
        reason:
          position > 0
            ? `${included}% of recent sends in a block within ${s.overdueSlots} slots, ${slots} slots on average`
            : `exploring: ${Math.round(samples * 10) / 10} recent outcomes, ranked from ${s.minSamples}`,
      };
    }
    return out;
  }
}

/** What the console shows of a node's rank (node-wide; no count of anyone's sends). */
export type RankShown = Pick<RankView, 'position' | 'includedPct' | 'meanSlots' | 'reason'>;

function meanSlots(d: Decayed): number {
  return d.inTime > 0 ? d.slots / d.inTime : 0;
}

function wellFormed(s: RankSamples | undefined): s is RankSamples {
  if (typeof s !== 'object' || s === null) return false;
  for (const v of [s.inTime, s.late, s.slots]) if (!(typeof v === 'number' && v >= 0 && Number.isFinite(v))) return false;
  return true;
}
