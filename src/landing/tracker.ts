// Follows every sendTransaction a node accepted until it lands at routing.landing.commitment,
// fails, or its blockhash expires (docs/landing.md "Tracking"), crediting the nodes it went to;
// with routing.landing.rebroadcastMs it resends the same bytes until then ("Rebroadcast").
// One tracker per data plane (the inline one, or each worker's): what a plane sent, it tracks.
// The request path only hands over an accepted send (Exchange); polling and resending run on
// timers of their own, after the client had its answer, and never more than one status call
// is in flight.

import type { Config } from '../config/schema.js';
import type { Logger } from '../log.js';
import { routable } from '../routing/node-view.js';
import { pickUnkeyed, type RankSettings } from '../routing/send-rank.js';
import { encodeBase58 } from '../solana/base58.js';
import { Commitment } from '../solana/chain-view.js';
import { readCallFields, SolanaFields } from '../solana/request-fields.js';
import { lastBlockhash, readRecentBlockhash, TxRead } from '../solana/transaction-bytes.js';
import { UpstreamCall, type CallOwner } from '../upstream/call.js';
import type { CopySink } from '../upstream/jito/engines.js';
import { probePost } from '../upstream/health.js';
import type { UpstreamNode } from '../upstream/node.js';
import type { MethodLatency, RouteRequest, Router } from '../upstream/router.js';
import { MAX_HASHES_PER_POLL, pollBody, readPollAnswer, type PollAnswer } from './status-poll.js';
import { bundleTxs } from './bundle-txs.js';
import { LandingTally, type Outcome } from './tally.js';

type LandingConfig = Config['routing']['landing'];

/** About one Solana slot: statuses are asked at most this often. */
export const POLL_MS = 400;
const TICK_MS = 50;
/** A transaction without a blockhash to watch (durable nonce, unreadable) leaves tracking after this long, uncounted as an outcome. */
export const MAX_AGE_MS = 90_000;
/** Nothing tracked outlives this, whatever the nodes say (a pool that never answers polls). */
const HARD_MAX_AGE_MS = 300_000;
const POLL_TIMEOUT_MS = 2_000;
const COMMITMENTS: readonly string[] = ['processed', 'confirmed', 'finalized'];

const RESULT_KEY = Buffer.from('"result":"');
const fields = new SolanaFields();

/** One tracked transaction; fields fixed at construction (one V8 shape). */
class Tracked {
  /** A status was seen at some commitment: it is in a block, resending is over. */
  seen = false;
  /** Its send-ranking outcome was counted (ranking.ts): in time, or overdue. */
  ranked = false;
  /** Its first send explored a node: not in a block within fallbackSlots, it goes to the best node too. */
  explored = false;
  nextResendAt: number;
  constructor(
    readonly signature: string,
    readonly token: string,
    /** Ids of the nodes it went to (first send, broadcast copies, resends). */
    readonly nodes: string[],
    readonly sentAt: number,
    public sentSlot: number,
    /** Base58; null when there is none to watch (durable nonce, unreadable bytes). */
    readonly blockhash: string | null,
    /** The resend's request body; null without rebroadcast. */
    readonly resend: Buffer | null,
    rebroadcastMs: number,
  ) {
    this.nextResendAt = sentAt + rebroadcastMs;
  }
}

/** Sends one call to one node, never elsewhere (a resend goes to the nodes it names). */
class PinnedRouter implements Router {
  readonly maxAttempts = 1;
  constructor(
    readonly node: UpstreamNode,
    readonly methodLatency: MethodLatency,
  ) {}
  route(req: RouteRequest): UpstreamNode | null {
    return (req.tried & this.node.bit) === 0 && routable(this.node) ? this.node : null;
  }
}

export interface TrackerParts {
  /** The plane's nodes as they are now (a reload may change them). */
  nodes(): readonly UpstreamNode[];
  methodLatency: MethodLatency;
  log: Logger;
  /** Wall clock in ms (tests). */
  now?: () => number;
}

export class LandingTracker implements CallOwner, CopySink {
  readonly tally = new LandingTally();
  /** Insertion order is age: the first entry is the oldest. */
  private readonly tracked = new Map<string, Tracked>();
  private commitment: number = Commitment.Confirmed;
  private maxTracked = 0;
  private rebroadcastMs = 0;
  private fanout = 1;
  /** routing.landing.ranking.overdueSlots; 0 when ranking is off (no samples are counted). */
  private overdueSlots = 0;
  private ranking: RankSettings | null = null;
  private timer: NodeJS.Timeout | null = null;
  private polling = false;
  private lastPollAt = 0;
  private lastPollSlot = -1;
  /** The freshest slot a poll saw: the sent slot when no chain view knows better. */
  private knownSlot = 0;
  private readonly routers = new WeakMap<UpstreamNode, PinnedRouter>();
  private readonly now: () => number;
  /** Status calls made (tests and docs: at most one per slot). */
  polls = 0;
  private stopped = false;

  constructor(
    config: Config,
    private readonly parts: TrackerParts,
  ) {
    this.now = parts.now ?? Date.now;
    this.reconfigure(config);
  }

  reconfigure(config: Config): void {
    const l: LandingConfig = config.routing.landing;
    this.commitment = COMMITMENTS.indexOf(l.commitment);
    this.maxTracked = l.maxTracked;
    this.rebroadcastMs = l.rebroadcastMs;
    this.fanout = config.routing.broadcast.fanout;
    const r = l.ranking;
    this.overdueSlots = r.enabled ? r.overdueSlots : 0;
    this.ranking = r.enabled ? r : null;
    while (this.tracked.size > this.maxTracked) this.dropOldest();
  }

  /** Transactions tracked now. */
  get size(): number {
    return this.tracked.size;
  }

  /** What the tracker holds for `signature` (tests): its nodes and whether a status was seen; undefined when not tracked. */
  peek(signature: string): { nodes: readonly string[]; seen: boolean } | undefined {
    const t = this.tracked.get(signature);
    return t === undefined ? undefined : { nodes: t.nodes, seen: t.seen };
  }

  /**
   * A node accepted `call` (a sendTransaction answered with a result, not an error): it is
   * tracked from now on. `tried` names the nodes it went to (a broadcast's copies too).
   */
  accepted(call: UpstreamCall, token: string): void {
    if (this.maxTracked === 0 || this.stopped) return;
    const sig = signatureOf(call.response!);
    if (sig === null) return;
    const nodes = this.parts.nodes();
    const old = this.tracked.get(sig);
    if (old !== undefined) {
      // The client sent it again itself: more nodes to credit, nothing new to follow.
      for (const n of nodes) if ((call.tried & n.bit) !== 0) this.addNode(old, n.id);
      return;
    }
    // An explored node that answered at once: its send falls back to the best node if it does not land soon.
    const explored = call.explored && call.fanout === 1 && call.attempts === 1 && this.ranking !== null;
    const t = this.sent(call.body, call.paramsStart, call.paramsEnd, sig, token, explored);
    t.explored = explored;
    for (const n of nodes) if ((call.tried & n.bit) !== 0) this.addNode(t, n.id);
  }

  /** A block engine accepted a copy of a sendTransaction (routing.broadcast.engines): credited to it as a node (docs/jito.md). */
  copyAccepted(engineId: string, token: string, request: Buffer, paramsStart: number, paramsEnd: number, answer: Buffer): void {
    if (this.maxTracked === 0 || this.stopped) return;
    const sig = signatureOf(answer);
    if (sig === null) return;
    this.addNode(this.tracked.get(sig) ?? this.sent(request, paramsStart, paramsEnd, sig, token), engineId);
  }

  /** A block engine accepted a sendBundle: each of its transactions is followed like a send, credited to the engine (docs/jito.md). */
  acceptedBundle(request: Buffer, engineId: string, token: string): void {
    if (this.maxTracked === 0 || this.stopped) return;
    for (const tx of bundleTxs(request)) {
      const t = this.tracked.get(tx.signature) ?? this.track(tx.signature, tx.blockhash, null, token);
      this.addNode(t, engineId);
    }
  }

  /** A sendTransaction `request` a node took: tracked from now on, resent with rebroadcast. */
  private sent(body: Buffer, paramsStart: number, paramsEnd: number, sig: string, token: string, resendable = false): Tracked {
    let hash: string | null = null;
    let resend: Buffer | null = null;
    readCallFields('sendTransaction', body, paramsStart, paramsEnd, fields);
    if (fields.txStart >= 0) {
      if (readRecentBlockhash(body, fields.txStart, fields.txEnd, fields.txEncoding) === TxRead.Ok) hash = encodeBase58(lastBlockhash);
      if (this.rebroadcastMs > 0 || resendable) resend = resendBody(body.toString('latin1', fields.txStart, fields.txEnd), fields.txEncoding === 1);
    }
    return this.track(sig, hash, resend, token);
  }

  private track(sig: string, hash: string | null, resend: Buffer | null, token: string): Tracked {
    if (this.tracked.size >= this.maxTracked) this.dropOldest();
    const t = new Tracked(sig, token, [], this.now(), this.freshestSlot(this.parts.nodes()), hash, resend, this.rebroadcastMs);
    this.tracked.set(sig, t);
    this.tally.sentFor(token);
    if (this.timer === null) {
      this.timer = setInterval(onTick, TICK_MS, this);
      this.timer.unref();
    }
    return t;
  }

  private addNode(t: Tracked, id: string): void {
    if (t.nodes.includes(id)) return;
    t.nodes.push(id);
    this.tally.sentTo(id, t.token);
  }

  private dropOldest(): void {
    const first = this.tracked.values().next();
    if (first.done === true) return;
    this.end(first.value, 'untracked', 0);
  }

  private end(t: Tracked, outcome: Outcome, slot: number): void {
    this.tracked.delete(t.signature);
    if (outcome === 'expired') this.rank(t, false, 0);
    this.tally.ended(outcome, t.nodes, t.token, slot - t.sentSlot);
    // Each transaction's own outcome, for an operator following one (log.level debug).
    const log = this.parts.log;
    if (log.isLevelEnabled('debug')) {
      const landedAt = outcome === 'landed' || outcome === 'failed' ? { slot, slots: slot - t.sentSlot } : {};
      log.debug({ signature: t.signature, outcome, ...landedAt, ms: this.now() - t.sentAt, nodes: t.nodes }, 'tracked transaction ended');
    }
  }

  /** An explored send not in a block within fallbackSlots: late for the explored node, and sent to the best node. */
  private fallBack(t: Tracked): void {
    this.rank(t, false, 0);
    const nodes = this.parts.nodes();
    let tried = 0;
    for (const n of nodes) if (t.nodes.includes(n.id)) tried |= n.bit;
    const best = pickUnkeyed(nodes, 'sendTransaction', tried, { ...this.ranking!, exploreShare: 0 });
    if (best === null || t.resend === null) return;
    this.addNode(t, best.id);
    this.send(best, t);
  }

  /** Counts `t` for the send ranking, once. */
  private rank(t: Tracked, inTime: boolean, slots: number): void {
    if (t.ranked || this.overdueSlots === 0) return;
    t.ranked = true;
    this.tally.ranked(t.nodes, inTime, slots);
  }

  /** The highest processed slot any node's chain view holds, else what the last poll saw. */
  private freshestSlot(nodes: readonly UpstreamNode[]): number {
    let best = this.knownSlot;
    for (const n of nodes) best = Math.max(best, n.chain.slot(Commitment.Processed));
    return best;
  }

  /** Every TICK_MS while something is tracked: resends that are due, and a poll once per slot. */
  tick(): void {
    if (this.tracked.size === 0) {
      if (this.timer !== null) clearInterval(this.timer);
      this.timer = null;
      return;
    }
    const now = this.now();
    if (this.rebroadcastMs > 0) this.resendDue(now);
    if (this.polling) return;
    const nodes = this.parts.nodes();
    // Once per slot: when the nodes' chain views move on; every POLL_MS when no view is known,
    // and every other POLL_MS while the views stand still (a slot stream that stopped).
    let slot = 0;
    for (const n of nodes) slot = Math.max(slot, n.chain.slot(Commitment.Processed));
    const since = now - this.lastPollAt;
    if (slot > 0 ? slot <= this.lastPollSlot && since < 2 * POLL_MS : since < POLL_MS) return;
    this.lastPollSlot = slot;
    void this.poll(nodes, now);
  }

  private resendDue(now: number): void {
    const nodes = this.parts.nodes();
    for (const t of this.tracked.values()) {
      if (t.seen || t.resend === null || t.nextResendAt > now) continue;
      t.nextResendAt = now + this.rebroadcastMs;
      // Its own nodes, then the best others up to the broadcast fanout.
      let extra = this.fanout - t.nodes.length;
      for (const n of nodes) {
        if (!routable(n)) continue;
        if (!t.nodes.includes(n.id)) {
          if (extra <= 0) continue;
          extra--;
          this.addNode(t, n.id);
        }
        this.send(n, t);
      }
    }
  }

  private send(node: UpstreamNode, t: Tracked): void {
    let router = this.routers.get(node);
    if (router === undefined) this.routers.set(node, (router = new PinnedRouter(node, this.parts.methodLatency)));
    this.tally.resent(node.id, t.token);
    new UpstreamCall(this, router, t.resend!, 'sendTransaction', -1, POLL_TIMEOUT_MS, true, true, 0, 0, null).start();
  }

  /** A resend's answer: nothing to do (a node's refusal of a copy changes nothing). */
  onCallDone(): void {}

  /** The freshest routable node at the landing commitment answers one batch for everything tracked. */
  private async poll(nodes: readonly UpstreamNode[], now: number): Promise<void> {
    let node: UpstreamNode | null = null;
    let best = -1;
    for (const n of nodes) {
      if (!routable(n)) continue;
      const s = n.chain.slot(this.commitment);
      if (s > best) {
        best = s;
        node = n;
      }
    }
    if (node === null) return;
    this.polling = true;
    this.lastPollAt = now;
    const sigs: string[] = [];
    const hashes = new Set<string>();
    for (const t of this.tracked.values()) {
      sigs.push(t.signature);
      if (t.blockhash !== null && !t.seen && hashes.size < MAX_HASHES_PER_POLL) hashes.add(t.blockhash);
    }
    const hashList = [...hashes];
    this.polls++;
    try {
      const answer = readPollAnswer(await probePost(node, pollBody(sigs, hashList), POLL_TIMEOUT_MS), sigs, hashList);
      if (answer !== null) this.apply(sigs, answer);
    } catch (err) {
      this.parts.log.debug({ err, node: node.id }, 'landing status poll failed; the next slot asks again');
    } finally {
      this.polling = false;
    }
  }

  private apply(sigs: readonly string[], answer: PollAnswer): void {
    if (answer.slot > this.knownSlot) this.knownSlot = answer.slot;
    const now = this.now();
    for (let i = 0; i < sigs.length; i++) {
      const t = this.tracked.get(sigs[i]!);
      if (t === undefined) continue;
      const s = answer.statuses[i]!;
      if (s !== null && s.level < 0) continue;
      if (t.sentSlot === 0 && answer.slot > 0) t.sentSlot = answer.slot;
      if (s !== null) {
        t.seen = true;
        const slots = s.slot - t.sentSlot;
        this.rank(t, slots <= this.overdueSlots, slots);
        if (s.level >= this.commitment) this.end(t, s.failed ? 'failed' : 'landed', s.slot);
        continue;
      }
      if (t.explored && !t.ranked && t.sentSlot > 0 && answer.slot - t.sentSlot >= this.ranking!.fallbackSlots) this.fallBack(t);
      // No status: overdue for the ranking once overdueSlots passed since it was sent.
      if (!t.ranked && t.sentSlot > 0 && answer.slot - t.sentSlot > this.overdueSlots) this.rank(t, false, 0);
      // Expired once its blockhash is no longer valid on the freshest node.
      if (t.blockhash !== null && answer.valid.get(t.blockhash) === false) this.end(t, 'expired', 0);
      else if (now - t.sentAt > (t.blockhash === null ? MAX_AGE_MS : HARD_MAX_AGE_MS)) this.end(t, 'untracked', 0);
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}

function onTick(tracker: LandingTracker): void {
  tracker.tick();
}

/** The signature a sendTransaction answer names (`"result":"…"`), or null. */
export function signatureOf(answer: Buffer): string | null {
  const at = answer.indexOf(RESULT_KEY);
  if (at < 0) return null;
  const start = at + RESULT_KEY.length;
  const end = answer.indexOf(0x22, start);
  return end > start && end - start <= 88 ? answer.toString('latin1', start, end) : null;
}

/** A resend: the same encoded transaction, no preflight (it passed once), no retries by the node. */
function resendBody(tx: string, base64: boolean): Buffer {
  return Buffer.from(
    '{"jsonrpc":"2.0","id":1,"method":"sendTransaction","params":["' +
      tx +
      '",{"encoding":"' +
      (base64 ? 'base64' : 'base58') +
      '","skipPreflight":true,"maxRetries":0}]}',
    'latin1',
  );
}
