// Which node serves an affinity slot (docs/routing.md "Affinity and rate limits", "Monotonic reads").
//
// Without monotonic reads: the first usable node of the slot's fixed sequence (KeyMap), else
// the first unhealthy one (a last resort); retries skip the nodes they tried.
//
// With them, a key may leave the nodes before it in its sequence (its primary down, drained,
// tried, or back but not caught up yet) only for a node known to be at least at the highest
// slot any of those nodes has served (their high-water marks): a node's known slot is the
// larger of its last probe and its own high-water mark. After a weight change moved the slot,
// the slot's previous owner counts as one of those nodes, with its mark as it was at the
// change. When a node is usable but behind, the answer is WAIT: the caller parks the call
// until one catches up or the wait ends (7505). Keys whose first node is usable take the fast
// path: one or two table reads, no allocation.
//
// Marks and known slots are per level (high-water.ts): a pick compares at the call's level only,
// and a node's known slot at a level also counts its chain view there (Solana's slot at that
// commitment, docs/solana-routing.md "Monotonic reads per commitment").

import { MARK_LEVELS, R_DOWN, R_DRAINED, R_MOVED, R_RETRY, R_RETURNING, type NodeMark } from './high-water.js';
import type { KeyMap } from './keymap.js';
import { answersProbes, inTier, takesTraffic, usable, type NodeView } from './node-view.js';

export interface MarkedNode extends NodeView {
  readonly mark: NodeMark;
  /** The node's slot per level as the chain watch saw it (0 while unknown); absent: the probe's only. */
  readonly chain?: { slot(level: number): number };
}

/** The key map before the last weight or node change, kept until every node caught up. */
export interface PreviousMap<N extends MarkedNode> {
  readonly map: KeyMap;
  readonly nodes: readonly N[];
  /** Each of those nodes' high-water mark at the change, per level (node i, level l at i * MARK_LEVELS + l). */
  readonly floor: Float64Array;
}

/** The floor of a PreviousMap: `nodes`' marks now, at every level. */
export function markFloor(nodes: readonly MarkedNode[]): Float64Array {
  const f = new Float64Array(nodes.length * MARK_LEVELS);
  for (let i = 0; i < nodes.length; i++) for (let l = 0; l < MARK_LEVELS; l++) f[i * MARK_LEVELS + l] = nodes[i]!.mark.at(l);
  return f;
}

/** pick()'s answer when nodes are usable but none has caught up: park the call. */
export const WAIT = -2;

const NO_NODES: readonly never[] = [];

/** Settled: not waiting to catch up after coming back. */
function settled(n: MarkedNode): boolean {
  return !n.mark.returning;
}

/** The slot `n` is known to have reached at `level`: its probe's, its chain view's, or its own mark's. */
export function knownAt(n: MarkedNode, level: number): number {
  const hw = n.mark.at(level);
  const c = n.chain === undefined ? 0 : n.chain.slot(level);
  const k = n.slot > hw ? n.slot : hw;
  return c > k ? c : k;
}

export class KeyedPicker<N extends MarkedNode> {
  monotonic = true;
  /** After a WAIT: the slot needed, the best one available, the node the key left and why. */
  need = 0;
  best = -1;
  left: N | null = null;
  reason = R_DOWN;
  // What the predicates read for the pick under way (no closure per call).
  private nodes: readonly N[] = NO_NODES;
  private tried = 0;
  private allowed: Uint8Array | null = null;
  private level = 0;
  /** The walked slot's sequence (KeyMap.sequenceInto), grown to the node count. */
  private seq = new Int32Array(8);

  private readonly isAllowed = (i: number): boolean => this.allowed === null || this.allowed[i] === 1;

  private readonly preferred = (i: number): boolean => {
    const n = this.nodes[i]!;
    return this.isAllowed(i) && usable(n) && (n.bit & this.tried) === 0 && (!this.monotonic || settled(n));
  };

  private readonly lastResort = (i: number): boolean => this.isAllowed(i) && inTier(this.nodes[i]!, 'unhealthy', this.tried);

  /** Node index for `slot`, -1 when none is left, or WAIT. `allowed`: label rule (null: any node); `level`: the call's mark level. */
  pick(map: KeyMap, nodes: readonly N[], slot: number, tried: number, allowed: Uint8Array | null, prev: PreviousMap<N> | null, level = 0): number {
    this.nodes = nodes;
    this.level = level;
    this.tried = tried;
    this.allowed = allowed;
    const first = allowed === null ? map.primary(slot) : map.pick(slot, this.isAllowed);
    let moved = -1;
    if (this.monotonic && prev !== null && first >= 0) {
      // A label rule's indexes are the current list's: the old map is read with it when the
      // change kept the list (weights, drains); after a reload changed the node set, not.
      const p = allowed === null ? prev.map.primary(slot) : prev.nodes === nodes ? prev.map.pick(slot, this.isAllowed) : -1;
      // Moved by the change, to a node not yet known to be where the old one was.
      if (p >= 0 && prev.nodes[p] !== nodes[first] && knownAt(nodes[first]!, level) < prev.floor[p * MARK_LEVELS + level]!) moved = p;
    }
    if (first >= 0 && moved < 0 && this.preferred(first)) return this.done(first);
    if (!this.monotonic) {
      const i = map.pick(slot, this.preferred);
      return this.done(i >= 0 ? i : map.pick(slot, this.lastResort));
    }
    return this.done(this.walk(map, slot, moved < 0 ? null : prev, moved));
  }

  private done(i: number): number {
    this.nodes = NO_NODES;
    this.allowed = null;
    return i;
  }

  /** The slow path: the slot's whole sequence, in order (a failover, not every request). */
  private walk(map: KeyMap, slot: number, prev: PreviousMap<N> | null, moved: number): number {
    const nodes = this.nodes;
    if (this.seq.length < map.nodes.length) this.seq = new Int32Array(map.nodes.length);
    const seq = this.seq;
    const count = map.sequenceInto(slot, seq);
    const level = this.level;
    let need = prev === null ? 0 : prev.floor[moved * MARK_LEVELS + level]!;
    this.left = prev === null ? null : prev.nodes[moved]!;
    this.reason = R_MOVED;
    let best = -1;
    for (let s = 0; s < count; s++) {
      const i = seq[s]!;
      if (!this.isAllowed(i)) continue;
      const n = nodes[i]!;
      const candidate = usable(n) && (n.bit & this.tried) === 0;
      if (candidate && settled(n)) {
        const k = knownAt(n, level);
        if (k >= need) return i;
        if (k > best) best = k;
        continue;
      }
      // Back but behind (settling): it may catch up; until then it is one the key leaves.
      if (candidate && n.slot > best) best = n.slot;
      if (this.left === null) {
        this.left = n;
        this.reason = (n.bit & this.tried) !== 0 ? R_RETRY : !takesTraffic(n) ? R_DRAINED : answersProbes(n) ? R_RETURNING : R_DOWN;
      }
      const hw = n.mark.at(level);
      if (hw > need) need = hw;
    }
    // Unhealthy nodes only when no usable one may catch up: waiting beats a node that fails.
    if (best < 0) {
      for (let s = 0; s < count; s++) {
        const i = seq[s]!;
        if (!this.lastResort(i)) continue;
        const k = knownAt(nodes[i]!, level);
        if (k >= need) return i;
        if (k > best) best = k;
      }
    }
    this.need = need;
    this.best = best;
    return best >= 0 ? WAIT : -1;
  }
}
