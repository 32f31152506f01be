// Where client streams meet sources: one Feed per commitment in use (created with its first
// client, upstream streams opened then), the streams of each token (for the per-token limit and
// revocation: a revoked token's streams end at once, docs/grpc.md "Auth and usage"), the upstream
// clients shared by every feed and by the unary calls.

import * as grpc from '@grpc/grpc-js';
import type { TokenTable } from '../gateway/token-table.js';
import type { Logger } from '../log.js';
import type { ClientStream, StreamOwner } from './client-stream.js';
import { Feed, type FeedTap } from './feed.js';
import type { ClientFilters, GrpcLimits } from './filters.js';
import type { GrpcMetrics } from './metrics.js';
import { sourceClient, type SourceConfig } from './source.js';

export interface HubOptions {
  sources: readonly SourceConfig[];
  limits: GrpcLimits;
  windowSlots: number;
  windowBytes: number;
  stallMs: number;
  metrics: GrpcMetrics;
  log: Logger;
}

export class GrpcHub implements StreamOwner {
  readonly feeds = new Map<number, Feed>();
  readonly upstream: grpc.Client[];
  private readonly byToken = new Map<string, Set<ClientStream>>();

  constructor(
    private readonly opts: HubOptions,
    tokens: TokenTable,
  ) {
    this.upstream = opts.sources.map((s) => sourceClient(s.url));
    tokens.onRevoked((id) => this.revoked(id));
  }

  get streams(): number {
    let n = 0;
    for (const set of this.byToken.values()) n += set.size;
    return n;
  }

  /** False when the token already holds `maxStreamsPerToken` streams. */
  admit(s: ClientStream): boolean {
    let set = this.byToken.get(s.token.id);
    if (set === undefined) this.byToken.set(s.token.id, (set = new Set()));
    if (set.size >= this.opts.limits.maxStreamsPerToken) return false;
    set.add(s);
    this.opts.metrics.streams.inc();
    return true;
  }

  /** Puts the stream on its (possibly new) filters; replays `fromSlot` first when given. Throws FilterError. */
  place(s: ClientStream, filters: ClientFilters, fromSlot: number | undefined): void {
    const old = s.commitment === -1 ? null : this.feeds.get(s.commitment)!;
    const feed = this.feed(filters.commitment);
    if (fromSlot !== undefined) checkFromSlot(feed, fromSlot);
    if (old !== null && old !== feed) {
      old.clients.delete(s);
      old.filtersChanged(false);
    }
    s.filters = filters;
    s.commitment = filters.commitment;
    if (fromSlot !== undefined) feed.replay(s, fromSlot);
    feed.clients.add(s);
    // A feed with nothing kept yet asks its sources for `from_slot` as it opens them.
    feed.filtersChanged(true, fromSlot !== undefined && feed.dedup.oldestSlot === -1 ? fromSlot : undefined);
  }

  detach(s: ClientStream): void {
    const set = this.byToken.get(s.token.id);
    if (set?.delete(s) === true) {
      this.opts.metrics.streams.dec();
      if (set.size === 0) this.byToken.delete(s.token.id);
    }
    if (s.commitment === -1) return;
    const feed = this.feeds.get(s.commitment);
    if (feed?.clients.delete(s) === true) feed.filtersChanged(false);
  }

  /** Adds a subscriber inside the gateway to the feed of `commitment` (opening it); its filters join the union at once. */
  addTap(commitment: number, tap: FeedTap): Feed {
    const f = this.feed(commitment);
    f.taps.add(tap);
    f.filtersChanged(true);
    return f;
  }

  private feed(commitment: number): Feed {
    let f = this.feeds.get(commitment);
    if (f === undefined) {
      const o = this.opts;
      f = new Feed({
        commitment,
        sources: o.sources,
        clients: this.upstream,
        windowSlots: o.windowSlots,
        windowBytes: o.windowBytes,
        stallMs: o.stallMs,
        metrics: o.metrics,
        log: o.log,
      });
      this.feeds.set(commitment, f);
    }
    return f;
  }

  private revoked(tokenId: string): void {
    const set = this.byToken.get(tokenId);
    if (set === undefined) return;
    for (const s of [...set]) s.end(grpc.status.UNAUTHENTICATED, 'the API token was revoked');
  }

  /** Upstream streams open per source id (docs/grpc.md "Sharing upstream subscriptions"). */
  upstreamStreams(): Map<string, number> {
    const out = new Map<string, number>();
    for (const f of this.feeds.values()) f.openStreams(out);
    return out;
  }

  close(): void {
    for (const set of this.byToken.values()) for (const s of [...set]) s.end(grpc.status.UNAVAILABLE, 'the gateway is stopping');
    for (const f of this.feeds.values()) f.close();
    this.feeds.clear();
    for (const c of this.upstream) c.close();
  }
}

export class FromSlotError extends Error {}

function checkFromSlot(feed: Feed, fromSlot: number): void {
  const oldest = feed.dedup.oldestSlot;
  // Nothing kept yet (the feed is new): the sources are asked for from_slot instead.
  if (oldest === -1) return;
  if (fromSlot < oldest) throw new FromSlotError(`from_slot ${fromSlot} is not available: the oldest slot kept is ${oldest} (grpc.windowSlots)`);
}
