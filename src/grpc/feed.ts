// The clients of one commitment and the upstream streams serving them: one Subscribe stream
// per source, for the union of the clients' filters (./union.ts, docs/grpc.md "Sharing upstream subscriptions").
// Every update from every source goes through one dedup window; a first arrival is matched
// against each client's filters and its bytes written to those that want it.

import type * as grpc from '@grpc/grpc-js';
import type { Logger } from '../log.js';
import { frame, type ClientStream } from './client-stream.js';
import { ACCEPTED, DedupWindow, DUPLICATE, LATE, SUPERSEDED } from './dedup.js';
import type { GrpcMetrics, SourceSeries } from './metrics.js';
import { SourceLink, type SourceConfig } from './source.js';
import { unionRequest } from './union.js';
import { KIND_ACCOUNT, KIND_BLOCK_META, KIND_PONG, KIND_SLOT, KIND_TRANSACTION, type Update } from './update.js';

/**
 * A subscriber inside the gateway (the account cache's feed): its filters join the union like
 * a client's, and it sees each first arrival they match, the sources' pongs and their gaps.
 */
export interface FeedTap {
  /** The accounts it wants (base58), beside every slot status. */
  readonly accountKeys: ReadonlySet<string>;
  /** Whether it wants this first arrival (a slot status, or one of its accounts). */
  wants(u: Update): boolean;
  update(u: Update): void;
  pong(link: SourceLink, id: number): void;
  /** A source's stream reopened without asking for what it missed (from_slot refused or never had): updates may be missing. */
  gap(link: SourceLink): void;
}

export interface FeedOptions {
  commitment: number;
  sources: readonly SourceConfig[];
  clients: readonly grpc.Client[];
  windowSlots: number;
  windowBytes: number;
  stallMs: number;
  metrics: GrpcMetrics;
  log: Logger;
}

/** How long a shrinking union waits before the upstream request follows (a client leaving and another joining costs one request). */
const SHRINK_DELAY_MS = 1000;
const WATCH_MS = 250;

export class Feed {
  readonly clients = new Set<ClientStream>();
  readonly taps = new Set<FeedTap>();
  readonly dedup: DedupWindow;
  private readonly links: SourceLink[];
  private readonly series: SourceSeries[];
  private sentRequest = '';
  private shrinkTimer: NodeJS.Timeout | null = null;
  private readonly watch: NodeJS.Timeout;
  /** Updates delivered to at least one client, and per-client writes. */
  delivered = 0;

  constructor(private readonly opts: FeedOptions) {
    this.dedup = new DedupWindow(opts.windowSlots, opts.windowBytes);
    const events = {
      update: (link: SourceLink, u: Update) => this.arrived(link, u),
      reconnected: (link: SourceLink, resumed: boolean) => {
        this.series[link.index]!.reconnects.inc();
        if (!resumed) for (const t of this.taps) t.gap(link);
      },
    };
    this.links = opts.sources.map((s, i) => new SourceLink(s, i, opts.clients[i]!, events, opts.log));
    this.series = opts.sources.map((s) => opts.metrics.source(s.id));
    this.watch = setInterval(() => this.checkStalls(), WATCH_MS);
    this.watch.unref();
  }

  get sources(): readonly SourceLink[] {
    return this.links;
  }

  /** Re-derives the upstream request; growth goes out at once, shrinking after a pause. */
  filtersChanged(grown: boolean, fromSlot?: number): void {
    if (grown) this.sendUnion(fromSlot);
    else if (this.shrinkTimer === null) {
      this.shrinkTimer = setTimeout(() => {
        this.shrinkTimer = null;
        this.sendUnion();
      }, SHRINK_DELAY_MS);
      this.shrinkTimer.unref();
    }
  }

  /** `fromSlot` reaches the sources only with a stream's first request (a new feed whose first client resumes). */
  private sendUnion(fromSlot?: number): void {
    const filters = [...this.clients].map((c) => c.filters!).filter((f) => !f.empty);
    // No upstream stream before a client wants something (clients often open with an empty
    // request): the first real request may carry from_slot.
    if (filters.length === 0 && this.taps.size === 0 && this.sentRequest === '') return;
    const req = unionRequest(filters, this.opts.commitment, this.taps.size === 0 ? null : [...this.taps].map((t) => t.accountKeys));
    const text = JSON.stringify(req);
    if (text === this.sentRequest) return;
    this.sentRequest = text;
    for (const l of this.links) l.subscribe(req, fromSlot);
  }

  private arrived(link: SourceLink, u: Update): void {
    if (u.kind === KIND_PONG) {
      for (const t of this.taps) t.pong(link, u.parent);
      return;
    }
    if (u.kind !== KIND_SLOT && u.kind !== KIND_ACCOUNT && u.kind !== KIND_TRANSACTION && u.kind !== KIND_BLOCK_META) return;
    const now = performance.now();
    const verdict = this.dedup.accept(u, now);
    const series = this.series[link.index]!;
    if (verdict === DUPLICATE) {
      series.duplicate.inc();
      series.lag.observe(this.dedup.lagMs / 1000);
      return;
    }
    if (verdict === LATE) {
      this.opts.metrics.dropped.labels('late').inc();
      return;
    }
    if (verdict === SUPERSEDED) {
      this.opts.metrics.dropped.labels('superseded').inc();
      return;
    }
    if (verdict !== ACCEPTED) return;
    series.first.inc();
    for (const l of this.links) if (l !== link && l.behindSince === 0) l.behindSince = now;
    // Framed once per distinct `filters` prefix: clients with the same filter names (the
    // common case) share one buffer, written as is (./client-stream.ts).
    let lastPrefix: Buffer | null = null;
    let framed: Buffer | null = null;
    for (const c of this.clients) {
      const prefix = c.filters!.match(u);
      if (prefix === null) continue;
      if (framed === null || (prefix !== lastPrefix && !prefix.equals(lastPrefix!))) framed = frame(prefix, u.body);
      lastPrefix = prefix;
      c.send(framed);
    }
    if (framed !== null) this.delivered++;
    for (const t of this.taps) if (t.wants(u)) t.update(u);
  }

  /** Pings every open source stream (a tap waits for the pongs: ./source.ts ping). */
  ping(id: number): number {
    let n = 0;
    for (const l of this.links) if (l.ping(id)) n++;
    return n;
  }

  /** Writes the kept first arrivals of slots >= from that match the client, oldest first. */
  replay(c: ClientStream, from: number): void {
    for (const u of this.dedup.since(from)) {
      const prefix = c.filters!.match(u);
      if (prefix !== null) c.send(frame(prefix, u.body));
    }
  }

  private checkStalls(): void {
    // Stalled: another source delivered something new stallMs ago and this one has sent
    // nothing since. A source that is merely behind keeps sending and is left alone.
    const now = performance.now();
    for (const l of this.links) if (l.connected && l.behindSince !== 0 && now - l.behindSince >= this.opts.stallMs) l.restartStalled();
  }

  /** Upstream streams open per source id. */
  openStreams(out: Map<string, number>): void {
    for (const l of this.links) out.set(l.id, (out.get(l.id) ?? 0) + (l.connected ? 1 : 0));
  }

  close(): void {
    clearInterval(this.watch);
    if (this.shrinkTimer !== null) clearTimeout(this.shrinkTimer);
    for (const l of this.links) l.close();
  }
}
