// Landing-aware send routing (docs/landing.md "Sends go where they land"): a sendTransaction
// without configured affinity goes to the node whose recent sends landed best, with a share
// kept for exploring the others. The control plane scores each node from every data plane's
// figures (landing/ranking.ts) and writes the score into the node's rank cell, a shared buffer
// each worker's copy of the node reads; a pick only reads numbers (no allocation).

import type { Config } from '../config/schema.js';
import { inTier, type NodeStateName, type NodeView } from './node-view.js';
import { pickNode } from './select.js';

/** Rank cell layout (Float64 words). */
export const RANK_SCORE = 0;
/** Recent outcomes weighed (decayed count); below the settings' minSamples a node is unexplored. */
export const RANK_SAMPLES = 1;
/** Share of recent sends seen in a block within overdueSlots (0–1). */
export const RANK_INCLUDED = 2;
/** Mean slots from send to its first status, over those seen in time. */
export const RANK_SLOTS = 3;
/** 1-based position among the nodes with enough samples; 0: not ranked. */
export const RANK_POSITION = 4;
const WORDS = 5;

/** A node's score as the control plane last wrote it, shared with every worker. */
export class RankCell {
  private view: Float64Array;

  constructor(buffer: SharedArrayBuffer = new SharedArrayBuffer(WORDS * 8)) {
    this.view = new Float64Array(buffer);
  }

  get buffer(): SharedArrayBuffer {
    return this.view.buffer as SharedArrayBuffer;
  }

  /** A worker takes the control plane's cell. */
  attach(buffer: SharedArrayBuffer): void {
    if (buffer !== this.view.buffer) this.view = new Float64Array(buffer);
  }

  get(word: number): number {
    return this.view[word]!;
  }

  set(word: number, value: number): void {
    this.view[word] = value;
  }
}

export interface RankedNode extends NodeView {
  readonly rank: RankCell;
}

/** `routing.landing.ranking` as in effect. */
export type RankSettings = Config['routing']['landing']['ranking'];

/** What a pick reads of it. */
export type PickSettings = Pick<RankSettings, 'exploreShare' | 'minSamples'>;

const TIERS: readonly NodeStateName[] = ['healthy', 'lagging', 'unhealthy'];

/** Whether the last pickSender() went to a node other than the best (the pool marks the call: landing/tracker.ts falls back). */
const lastPick = { explored: false };

/** Whether the last pick explored a node, once: reading clears it. */
export function takeExplored(): boolean {
  const e = lastPick.explored;
  lastPick.explored = false;
  return e;
}

/**
 * The node a send goes to among those not in `exclude`: in the first health tier with any
 * candidate, the best-scored node with enough samples, except that a share `exploreShare` of
 * sends goes to another candidate (one without enough samples first). Null when no candidate
 * of that tier has enough samples: the caller routes as for any call (lowest latency), which is
 * also how the first sends go.
 */
export function pickSender<N extends RankedNode>(nodes: readonly N[], exclude: number, s: PickSettings, random: () => number = Math.random): N | null {
  lastPick.explored = false;
  for (let t = 0; t < TIERS.length; t++) {
    const tier = TIERS[t]!;
    let best: N | null = null;
    let bestScore = -Infinity;
    let count = 0;
    let unexplored = 0;
    for (let i = 0; i < nodes.length; i++) {
      const n = nodes[i]!;
      if (!inTier(n, tier, exclude)) continue;
      count++;
      if (n.rank.get(RANK_SAMPLES) < s.minSamples) {
        unexplored++;
        continue;
      }
      const score = n.rank.get(RANK_SCORE);
      if (score > bestScore) {
        bestScore = score;
        best = n;
      }
    }
    if (count === 0) continue;
    if (best === null) return null;
    if (count === 1 || random() >= s.exploreShare) {
      // The ranking's first node was left out (behind on the blockhash, tried, spent): this send explores too.
      lastPick.explored = best.rank.get(RANK_POSITION) !== 1;
      return best;
    }
    // Exploring: an unexplored node when there is one, else any other candidate.
    const pool = unexplored > 0 ? unexplored : count - 1;
    let k = Math.floor(random() * pool);
    for (let i = 0; i < nodes.length; i++) {
      const n = nodes[i]!;
      if (n === best || !inTier(n, tier, exclude)) continue;
      if (unexplored > 0 && n.rank.get(RANK_SAMPLES) >= s.minSamples) continue;
      if (k-- !== 0) continue;
      lastPick.explored = true;
      return n;
    }
    return best;
  }
  return null;
}

/** A call without affinity: a send to the node that lands best while the ranking knows one, else default routing. */
export function pickUnkeyed<N extends RankedNode>(nodes: readonly N[], method: string, exclude: number, rank: RankSettings): N | null {
  if (rank.enabled && method === 'sendTransaction') {
    const n = pickSender(nodes, exclude, rank);
    if (n !== null) return n;
    // Nothing ranked yet: the send explores (it falls back to the best node once there is one).
    lastPick.explored = true;
  }
  return pickNode(nodes, exclude);
}

/** `routing.landing.ranking` in effect: not enabled when nothing is measured (no tracking) or the chain is not Solana. */
export function sendRankOf(config: Config): RankSettings {
  const l = config.routing.landing;
  return config.chain === 'solana' && l.maxTracked > 0 ? l.ranking : { ...l.ranking, enabled: false };
}
