// Keeps each node's chain view and the blockhash book current (docs/solana-routing.md
// "Chain view"). Runs on the control plane, never on a data-plane event loop: per node a
// `slotSubscribe` stream (processed slot and root, within a slot of the node) and rounds of one
// batch: `getSlot` at confirmed and `getLatestBlockhash` at processed (whose blockhash the book
// learns with its context slot). With the stream, a round runs when it announces a new slot
// (a new bank: a new latest blockhash) and then every `pollMs` only while a confirmation is
// still to come, or every `pollMs` while it announces nothing (stalled). Without it (no
// WebSocket, or it dropped) a round runs every `pollMs` and asks for the processed and finalized
// slots too, and the stream is reopened with backoff. A node that refuses batches is asked call
// by call.

import type { Logger } from 'pino';
import { probePost, rpc, type ProbeAnswer } from './health.js';
import type { UpstreamNode } from './node.js';
import { UpstreamSocket } from './ws/node-socket.js';
import type { BlockhashBook } from '../solana/blockhash-book.js';
import { Commitment, type ChainView } from '../solana/chain-view.js';

export interface ChainWatchOptions {
  /** Round period: every round without the stream; with it, while a confirmation is due (a quarter slot keeps confirmed within a slot). */
  pollMs: number;
  timeoutMs: number;
  /** Open the slot stream (off for nodes known to have no WebSocket, and in some tests). */
  stream: boolean;
}

/**
 * What a round asks, in this order: the confirmed slot and the latest blockhash; without a
 * stream, the processed and finalized slots too. A call's index here is its id in a batch.
 */
const ASKS = [
  '{"jsonrpc":"2.0","id":0,"method":"getSlot","params":[{"commitment":"confirmed"}]}',
  '{"jsonrpc":"2.0","id":1,"method":"getLatestBlockhash","params":[{"commitment":"processed"}]}',
  '{"jsonrpc":"2.0","id":2,"method":"getSlot","params":[{"commitment":"processed"}]}',
  '{"jsonrpc":"2.0","id":3,"method":"getSlot","params":[{"commitment":"finalized"}]}',
];
const ASK_CONFIRMED = 0;
const ASK_LATEST = 1;
const ASK_PROCESSED = 2;
const ASK_FINALIZED = 3;
/** Asks of a round with a slot stream, and without. */
const STREAMING_ASKS = 2;
const POLLING_ASKS = 4;
const ROUND_STREAMING = `[${ASKS.slice(0, STREAMING_ASKS).join(',')}]`;
const ROUND_POLLING = `[${ASKS.join(',')}]`;
const FIRST_AVAILABLE = '{"jsonrpc":"2.0","id":1,"method":"getFirstAvailableBlock"}';
const RESTREAM_MIN_MS = 500;
const RESTREAM_MAX_MS = 10_000;
/** A stream that announced no new slot for this long (stalled, or a chain of slow slots) is no guide: rounds every pollMs. */
const STREAM_QUIET_MS = 1000;

interface SlotNotification {
  params?: { result?: { slot?: unknown; root?: unknown } };
}

/** What one poll round learned; exported for tests and the admin API's "last poll". */
export interface PollResult {
  ok: boolean;
  error: string | null;
}

export class NodeChainWatch {
  private socket: UpstreamSocket | null = null;
  private streaming = false;
  private restreamMs = RESTREAM_MIN_MS;
  private timer: NodeJS.Timeout | null = null;
  private restreamTimer: NodeJS.Timeout | null = null;
  private polling = false;
  private stopped = false;
  private askedFirstAvailable = false;
  /** The highest slot the stream announced. */
  private streamSlot = 0;
  /** performance.now() when the last round started, and when the stream last announced a new slot. */
  private roundAt = 0;
  private slotAt = 0;
  /** The stream announced a slot that no round has followed yet (one was in flight, or one had just run). */
  private slotPending = false;
  /** Rounds go out as one batch request until the node refuses batches. */
  private batched = true;
  /** Updates from the stream (for tests and metrics). */
  streamUpdates = 0;
  polls = 0;

  constructor(
    readonly node: UpstreamNode,
    private readonly view: ChainView,
    private readonly book: BlockhashBook,
    private readonly opts: ChainWatchOptions,
    private readonly log: Logger,
  ) {}

  start(): void {
    if (this.opts.stream) this.openStream();
    this.retime(this.opts.pollMs);
    void this.poll();
  }

  /** Polls every `pollMs` from now on (a reload changed health.chainPollMs). */
  retime(pollMs: number): void {
    if (this.stopped) return;
    this.opts.pollMs = pollMs;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = setInterval(() => this.tick(), pollMs);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    if (this.restreamTimer !== null) clearTimeout(this.restreamTimer);
    this.socket?.close();
    this.socket = null;
  }

  /**
   * The timer. Without the stream (or while it announces nothing), a round every time. With it,
   * a round only when there is something to learn: a slot announced while the last round was in
   * flight, or a confirmation still to come. Each round is a wake-up of the control plane per
   * node, most of the chain watch's CPU (docs/solana-routing.md "Chain view").
   */
  private tick(): void {
    const guided = this.streaming && performance.now() - this.slotAt < STREAM_QUIET_MS;
    if (!guided || this.slotPending || this.confirmationDue()) void this.poll();
  }

  /**
   * Confirmed trails processed by more than one slot: the confirmation of a slot the node has
   * is still to come (a slot is confirmed about a slot after the node has it), so rounds go on.
   */
  private confirmationDue(): boolean {
    return this.view.slot(Commitment.Confirmed) < this.view.slot(Commitment.Processed) - 1;
  }

  /** The stream announced a new slot: a round now, at most one per half poll period (a node catching up announces slots in bursts). */
  private newSlot(): void {
    const now = performance.now();
    this.slotAt = now;
    if (this.polling || now - this.roundAt < this.opts.pollMs / 2) this.slotPending = true;
    else void this.poll();
  }

  /** Whether the slot stream is open and subscribed. */
  get streamed(): boolean {
    return this.streaming;
  }

  private openStream(): void {
    if (this.stopped) return;
    const socket = new UpstreamSocket(
      this.node,
      this.node.wsUrl,
      {
        notification: (_conn, frame) => this.onSlot(frame),
        closed: () => this.onStreamClosed(socket),
      },
      this.log,
    );
    this.socket = socket;
    socket.request('slotSubscribe', '[]', (frame, error) => {
      if (error !== null || frame === null || frame.includes('"error"')) {
        socket.close();
        return;
      }
      this.streaming = true;
      this.restreamMs = RESTREAM_MIN_MS;
    });
  }

  private onStreamClosed(socket: UpstreamSocket): void {
    if (this.socket !== socket) return;
    this.socket = null;
    this.streaming = false;
    if (this.stopped) return;
    this.restreamTimer = setTimeout(() => this.openStream(), this.restreamMs);
    this.restreamTimer.unref();
    this.restreamMs = Math.min(RESTREAM_MAX_MS, this.restreamMs * 2);
  }

  private onSlot(frame: Buffer): void {
    let n: SlotNotification;
    try {
      n = JSON.parse(frame.toString()) as SlotNotification;
    } catch {
      return;
    }
    const r = n.params?.result;
    if (r === undefined) return;
    if (typeof r.root === 'number') this.view.raise(Commitment.Finalized, r.root);
    this.streamUpdates++;
    if (typeof r.slot !== 'number') return;
    this.view.raise(Commitment.Processed, r.slot);
    if (r.slot > this.streamSlot) {
      this.streamSlot = r.slot;
      this.newSlot();
    }
  }

  private async call(body: string): Promise<unknown> {
    return this.resultOf(await rpc(this.node, body, this.opts.timeoutMs));
  }

  /** The answer's result; an error answer throws (a -32005 first tells the view how far behind the node says it is). */
  private resultOf(parsed: ProbeAnswer): unknown {
    if (parsed.error !== undefined) {
      const behind = parsed.error.data?.numSlotsBehind;
      if (parsed.error.code === -32005 && typeof behind === 'number') this.view.sayBehind(behind, Date.now());
      throw new Error('node error ' + String(parsed.error.code));
    }
    return parsed.result;
  }

  /** One request for the round (a batch): half the HTTP work of asking each in turn. */
  private async pollBatch(): Promise<void> {
    const answers = JSON.parse(await probePost(this.node, this.streaming ? ROUND_STREAMING : ROUND_POLLING, this.opts.timeoutMs)) as unknown;
    // A node (or a provider in front of it) that refuses batches is asked call by call from now on.
    if (!Array.isArray(answers)) {
      this.batched = false;
      return this.pollOneByOne();
    }
    for (const a of answers as (ProbeAnswer & { id?: unknown })[]) if (typeof a.id === 'number') this.learn(a.id, this.resultOf(a));
  }

  private async pollOneByOne(): Promise<void> {
    const asks = this.streaming ? STREAMING_ASKS : POLLING_ASKS;
    for (let ask = 0; ask < asks; ask++) this.learn(ask, await this.call(ASKS[ask]!));
  }

  /** What the answer to ASKS[ask] tells the view and the book. */
  private learn(ask: number, result: unknown): void {
    if (ask === ASK_LATEST) return this.learnLatest(result);
    if (typeof result !== 'number') return;
    if (ask === ASK_CONFIRMED) this.view.raise(Commitment.Confirmed, result);
    else if (ask === ASK_PROCESSED) this.view.raise(Commitment.Processed, result);
    else if (ask === ASK_FINALIZED) this.view.raise(Commitment.Finalized, result);
  }

  /** A getLatestBlockhash result: the book learns its blockhash at its context slot. */
  private learnLatest(result: unknown): void {
    const latest = result as { context?: { slot?: unknown }; value?: { blockhash?: unknown } } | undefined;
    const slot = latest?.context?.slot;
    const hash = latest?.value?.blockhash;
    if (typeof slot !== 'number' || typeof hash !== 'string') return;
    const text = Buffer.from(hash);
    this.book.learnBase58(text, 0, text.length, slot);
    this.view.raise(Commitment.Processed, slot);
  }

  /** One poll round; never throws (a failing node is the health prober's business). */
  async poll(): Promise<PollResult> {
    if (this.polling || this.stopped) return { ok: false, error: 'busy' };
    this.polling = true;
    this.polls++;
    this.roundAt = performance.now();
    this.slotPending = false;
    try {
      if (this.batched) await this.pollBatch();
      else await this.pollOneByOne();
      this.view.clearBehind();
      if (!this.askedFirstAvailable) {
        this.askedFirstAvailable = true;
        const first = await this.call(FIRST_AVAILABLE).catch(() => null);
        if (typeof first === 'number') this.view.setFirstAvailable(first);
      }
      return { ok: true, error: null };
    } catch (err) {
      return { ok: false, error: (err as Error).message };
    } finally {
      this.polling = false;
    }
  }
}

/** The chain watch's default poll period (health.chainPollMs): a quarter of a Solana slot. */
const CHAIN_POLL_MS = 100;

/** One watch per node of a Solana pool, kept in step with the node set (the control plane's, or an inline gateway's). */
export class ChainWatches {
  private readonly watches = new Map<UpstreamNode, NodeChainWatch>();
  private pollMs = CHAIN_POLL_MS;

  constructor(private readonly log: Logger) {}

  /** Watches exactly `nodes` (none: every watch stops), polling each every `opts.chainPollMs`. */
  sync(nodes: readonly UpstreamNode[], book: BlockhashBook, opts: { timeoutMs: number; chainPollMs?: number }): void {
    const pollMs = opts.chainPollMs ?? CHAIN_POLL_MS;
    for (const [n, w] of this.watches) {
      if (!nodes.includes(n)) {
        w.stop();
        this.watches.delete(n);
      } else if (pollMs !== this.pollMs) w.retime(pollMs);
    }
    this.pollMs = pollMs;
    for (const n of nodes) {
      if (this.watches.has(n)) continue;
      const w = new NodeChainWatch(n, n.chain, book, { pollMs, timeoutMs: opts.timeoutMs, stream: true }, this.log);
      this.watches.set(n, w);
      w.start();
    }
  }

  stop(): void {
    for (const w of this.watches.values()) w.stop();
    this.watches.clear();
  }
}
