// The control plane's fee watcher (docs/priority-fees.md "Where the data comes from"): as the
// nodes' confirmed slots advance (their chain views), it fetches each new slot's block once,
// from one node that has it (`getBlock`, full, base64, confirmed), over connections of its own,
// digests it (each non-vote transaction's compute-unit price and write-locked accounts) and
// publishes the digest to every data plane. It never runs on a data-plane event loop and no
// request waits for it.

import type { Logger } from '../log.js';
import { usable } from '../routing/node-view.js';
import { Commitment } from '../solana/chain-view.js';
import type { UpstreamNode } from '../upstream/node.js';
import { ProbeClient } from '../upstream/probe-client.js';
import type { SlotFees } from './levels.js';
import { readTxFees } from './tx-fees.js';

export interface FeeWatcherOptions {
  nodes: () => readonly UpstreamNode[];
  /** Slots of blocks kept (fees.estimates.lookbackSlots): how far back a start fetches. */
  windowSlots: number;
  publish: (blocks: SlotFees[]) => void;
  log: Logger;
  /** How often the nodes' confirmed slots are looked at. */
  pollMs?: number;
  timeoutMs?: number;
}

/** A block answer may be this large (a full mainnet block in base64 with its metas is a few MB). */
const BLOCK_ANSWER_MAX = 64 * 1024 * 1024;
/** A slot no node answered after this many attempts (one a round, nodes in turn) is given up. */
const MAX_ATTEMPTS = 20;
/** Slots that are skipped, or gone from the node (answered from no node). */
const NO_BLOCK_CODES = new Set([-32007, -32009, -32001]);

interface BlockAnswer {
  result?: { transactions?: { transaction?: [string, string]; meta?: { loadedAddresses?: { writable?: string[] } } | null }[] } | null;
  error?: { code?: number; message?: string };
}

/** A getBlock answer's digest; null when it has no block. Exported for tests. */
export function digestBlock(slot: number, answer: BlockAnswer): SlotFees | null {
  const txs = answer.result?.transactions;
  if (!Array.isArray(txs)) return null;
  const fees: SlotFees = { slot, prices: [], writes: [] };
  for (const t of txs) {
    const enc = t.transaction;
    if (!Array.isArray(enc) || typeof enc[0] !== 'string') continue;
    const read = readTxFees(Buffer.from(enc[0], 'base64'));
    if (read === null || read.vote) continue;
    const loaded = t.meta?.loadedAddresses?.writable;
    fees.prices.push(read.price);
    fees.writes.push(Array.isArray(loaded) ? [...read.writes, ...loaded.filter((k) => typeof k === 'string')] : read.writes);
  }
  return fees;
}

export class FeeWatcher {
  private readonly clients = new Map<UpstreamNode, ProbeClient>();
  private timer: NodeJS.Timeout | null = null;
  private busy = false;
  private stopped = false;
  /** The newest slot done (fetched, skipped or given up); -1 before the first. */
  private done = -1;
  private attempts = 0;
  private turn = 0;
  /** Blocks published (for tests and logs). */
  blocks = 0;

  constructor(private readonly opts: FeeWatcherOptions) {}

  start(): void {
    this.timer = setInterval(() => void this.round(), this.opts.pollMs ?? 100);
    this.timer.unref();
  }

  reconfigure(windowSlots: number): void {
    this.opts.windowSlots = windowSlots;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    await Promise.all([...this.clients.values()].map((c) => c.destroy()));
    this.clients.clear();
  }

  private client(n: UpstreamNode): ProbeClient {
    let c = this.clients.get(n);
    if (c === undefined) this.clients.set(n, (c = new ProbeClient(n.url, BLOCK_ANSWER_MAX)));
    return c;
  }

  /** Fetches every slot up to the freshest confirmed one, in order; one round at a time. */
  async round(): Promise<void> {
    if (this.busy || this.stopped) return;
    this.busy = true;
    try {
      const nodes = this.opts.nodes().filter((n) => usable(n));
      let top = -1;
      for (const n of nodes) top = Math.max(top, n.chain.slot(Commitment.Confirmed));
      if (top <= 0) return;
      // A node that left the set: its connections close.
      for (const [n, c] of this.clients) {
        if (this.opts.nodes().includes(n)) continue;
        void c.destroy();
        this.clients.delete(n);
      }
      let slot = Math.max(this.done + 1, top - this.opts.windowSlots + 1);
      // Published once the round ends: the first round's blocks (the whole window) arrive together.
      const got: SlotFees[] = [];
      try {
        while (slot <= top && !this.stopped) {
          const have = nodes.filter((n) => n.chain.slot(Commitment.Confirmed) >= slot);
          if (have.length === 0) return;
          // One node per slot, taken in turn.
          const node = have[this.turn++ % have.length]!;
          const block = await this.fetch(node, slot);
          if (block === 'later') {
            if (++this.attempts < MAX_ATTEMPTS) return;
            this.opts.log.debug({ slot, node: node.id }, 'fee watcher: block given up');
          } else if (block !== null) got.push(block);
          this.attempts = 0;
          this.done = slot++;
        }
      } finally {
        if (got.length > 0 && !this.stopped) {
          this.blocks += got.length;
          this.opts.publish(got);
        }
      }
    } finally {
      this.busy = false;
    }
  }

  /** The slot's digest, null when it has no block, 'later' when the node did not answer it. */
  private async fetch(node: UpstreamNode, slot: number): Promise<SlotFees | null | 'later'> {
    const body =
      '{"jsonrpc":"2.0","id":1,"method":"getBlock","params":[' +
      slot +
      ',{"encoding":"base64","transactionDetails":"full","rewards":false,"maxSupportedTransactionVersion":0,"commitment":"confirmed"}]}';
    try {
      const res = await this.client(node).post(node.path, body, this.opts.timeoutMs ?? 5000);
      if (res.status !== 200) return 'later';
      const answer = JSON.parse(res.text) as BlockAnswer;
      if (answer.error !== undefined) return NO_BLOCK_CODES.has(answer.error.code ?? 0) ? null : 'later';
      return digestBlock(slot, answer);
    } catch {
      return 'later';
    }
  }
}
