// A simulated Yellowstone gRPC source (docs/grpc.md "Simulated sources"): `geyser.Geyser` on
// its own port, streaming an UpdateFeed on the shared slot clock (trueSlot, so sims in other
// processes agree on the slot), through the gateway's own filter code. Per-source knobs: a
// fixed delay, random jitter on top (each stream stays in order, as a real stream does), drops,
// stalls, and `hang` (a source that keeps its streams open and sends nothing).

import * as grpc from '@grpc/grpc-js';
import { compileFilters, FilterError, type ClientFilters, type GrpcLimits } from '../../grpc/filters.js';
import { GEYSER_SERVICE } from '../../grpc/service.js';
import { decodeAs, encodeAs, geyserType, type SubscribeRequestObject } from '../../grpc/proto.js';
import type { Update } from '../../grpc/update.js';
import { rng } from '../rng.js';
import { BLOCKHASH_VALID_SLOTS, blockhashOf, blockHeightOf, slotOfBlockhash, trueSlot } from '../sim/chain.js';
import { GeneratedFeed, type UpdateFeed } from './feed.js';

export interface SimGrpcKnobs {
  delayMs: number;
  /**
   * Extra delay per update, 0..jitterMs: the source's own, drawn from the update and the
   * source's seed, so every stream of one source gets the same delay for the same update
   * (a source sees an update late, not one of its streams) and sources with other seeds
   * independent ones.
   */
  jitterMs: number;
  /** Probability that an update is never sent (per stream). */
  dropRate: number;
  /** Probability per slot that a stream stops for stallMs (then sends what it held). */
  stallRate: number;
  stallMs: number;
  /** Nothing is sent while true (streams stay open). */
  hang: boolean;
}

export interface SimGrpcOptions {
  host?: string;
  port?: number;
  slotMs?: number;
  feed?: UpdateFeed;
  knobs?: Partial<SimGrpcKnobs>;
  /** Required from clients in `x-token` when set. */
  xToken?: string;
  /** Seed of the knobs' randomness (the feed's content has its own seed): give each source its own. */
  seed?: number;
  /**
   * The source's processed slot minus the shared clock's slot (trueSlot), read at each slot:
   * 0 for the generator; a simulated node's is its cluster's tip offset minus its lag.
   */
  slotOffset?: () => number;
}

export interface SimGrpcSource {
  readonly port: number;
  readonly url: string;
  readonly knobs: SimGrpcKnobs;
  readonly slotMs: number;
  /** Open Subscribe streams. */
  streams(): number;
  /** The from_slot of the last request that carried one. */
  readonly lastFromSlot: number | null;
  /** Wall-clock ms at which `slot` began. */
  slotStart(slot: number): number;
  /** Stops abruptly (connections reset), keeping the port number for `restart`. */
  kill(): Promise<void>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

const LIMITS: GrpcLimits = {
  maxStreamsPerToken: 1e9,
  maxFiltersPerStream: 1000,
  maxAccountsPerFilter: 100_000,
  maxOwnersPerFilter: 100_000,
  maxDataFiltersPerFilter: 16,
  maxQueuedMessages: 1e9,
  maxRequestBytes: 64 << 20,
};
const MAX_REPLAY_SLOTS = 1000;

/** A number in [0, 1) from a seed and an update (FNV-1a of its slot and dedup key). */
export function delayUnit(seed: number, u: Update): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  const text = u.slot + u.dedupKey();
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  h = Math.imul(h ^ (h >>> 12), 0x297a2d39);
  return ((h ^ (h >>> 15)) >>> 0) / 4294967296;
}

class SimStream {
  filters: ClientFilters | null = null;
  queue: { due: number; bytes: Buffer }[] = [];
  head = 0;
  lastDue = 0;
  stalledUntil = 0;
  timer: NodeJS.Timeout | null = null;
  tip = 0;
  constructor(readonly call: grpc.ServerDuplexStream<Buffer, Buffer>) {}
}

export async function startSimGrpcSource(opts: SimGrpcOptions = {}): Promise<SimGrpcSource> {
  const slotMs = opts.slotMs ?? 400;
  const feed = opts.feed ?? new GeneratedFeed();
  const knobs: SimGrpcKnobs = { delayMs: 0, jitterMs: 0, dropRate: 0, stallRate: 0, stallMs: 0, hang: false, ...opts.knobs };
  const seed = opts.seed ?? 7;
  const random = rng(seed);
  const host = opts.host ?? '127.0.0.1';
  const streams = new Set<SimStream>();
  const requestType = geyserType('SubscribeRequest');
  const updateType = geyserType('SubscribeUpdate');

  const offset = opts.slotOffset ?? ((): number => 0);
  const tipNow = (): number => trueSlot(slotMs) + offset();
  const slotStart = (slot: number): number => {
    const now = Date.now();
    return now - (now % slotMs) + (slot - offset() - trueSlot(slotMs, now)) * slotMs;
  };

  const flush = (s: SimStream): void => {
    s.timer = null;
    const now = performance.now();
    while (s.head < s.queue.length && s.queue[s.head]!.due <= now) s.call.write(s.queue[s.head++]!.bytes);
    if (s.head > 1024 && s.head * 2 > s.queue.length) {
      s.queue = s.queue.slice(s.head);
      s.head = 0;
    }
    if (s.head < s.queue.length) s.timer = setTimeout(() => flush(s), Math.max(0, s.queue[s.head]!.due - now));
  };

  const enqueue = (s: SimStream, u: Update, bytes: Buffer, now: number): void => {
    if (knobs.hang || (knobs.dropRate > 0 && random() < knobs.dropRate)) return;
    const jitter = knobs.jitterMs === 0 ? 0 : delayUnit(seed, u) * knobs.jitterMs;
    const due = Math.max(s.lastDue, s.stalledUntil, now + knobs.delayMs + jitter);
    s.lastDue = due;
    s.queue.push({ due, bytes });
    if (s.timer === null) s.timer = setTimeout(() => flush(s), Math.max(0, due - now));
  };

  const sendSlot = (s: SimStream, tip: number, now: number): void => {
    const f = s.filters!;
    const depth = feed.depth(f.commitment);
    // A slot's writes before its statuses, as a validator's plugin sees them: a bank is frozen
    // (processed) after its last write, and the account cache relies on that order.
    for (const u of [...feed.blockUpdates(tip - depth), ...feed.slotUpdates(tip)]) {
      const prefix = f.match(u);
      if (prefix !== null) enqueue(s, u, Buffer.concat([prefix, u.body]), now);
    }
  };

  let lastTip = tipNow();
  let lastFromSlot: number | null = null;
  let ticker: NodeJS.Timeout | null = null;
  const tick = (): void => {
    const tip = tipNow();
    const now = performance.now();
    for (let t = lastTip + 1; t <= tip; t++) {
      for (const s of streams) {
        if (s.filters === null || t <= s.tip) continue;
        s.tip = t;
        if (knobs.stallRate > 0 && random() < knobs.stallRate) s.stalledUntil = now + knobs.stallMs;
        sendSlot(s, t, now);
      }
    }
    lastTip = Math.max(lastTip, tip);
    ticker = setTimeout(tick, Math.max(1, slotStart(tip + 1) - Date.now()));
  };

  const subscribe = (call: grpc.ServerDuplexStream<Buffer, Buffer>): void => {
    if (opts.xToken !== undefined && call.metadata.get('x-token')[0] !== opts.xToken) {
      call.emit('error', { code: grpc.status.UNAUTHENTICATED, details: 'x-token required' });
      return;
    }
    // Headers at once, as tonic sends them: clients wait for them before their first request.
    call.sendMetadata(new grpc.Metadata());
    const s = new SimStream(call);
    streams.add(s);
    const gone = (): void => {
      streams.delete(s);
      if (s.timer !== null) clearTimeout(s.timer);
    };
    call.on('end', () => {
      gone();
      call.end();
    });
    call.on('cancelled', gone);
    call.on('close', gone);
    call.on('error', gone);
    call.on('data', (bytes: Buffer) => {
      let req: SubscribeRequestObject;
      try {
        req = decodeAs<SubscribeRequestObject>(requestType, bytes);
        if (req.ping !== undefined) {
          call.write(encodeAs(updateType, { filters: [], pong: { id: req.ping.id ?? 0 } }));
          return;
        }
        s.filters = compileFilters(req, LIMITS);
      } catch (e) {
        gone();
        call.emit('error', {
          code: grpc.status.INVALID_ARGUMENT,
          details: e instanceof FilterError ? e.message : `malformed request: ${(e as Error).message}`,
        });
        return;
      }
      // The ticker sends each stream every tip after `s.tip`: a new stream starts after the
      // last tip the ticker has sent (so the next one reaches it whole), a replay ends there,
      // and replacing the filters of a running stream keeps its place (no tip skipped or doubled).
      const from = req.fromSlot;
      if (from !== undefined) lastFromSlot = from;
      if (from !== undefined && from <= lastTip) {
        if (lastTip - from > MAX_REPLAY_SLOTS) {
          gone();
          call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: `from_slot ${from} is older than ${MAX_REPLAY_SLOTS} slots` });
          return;
        }
        const now = performance.now();
        for (let t = from; t <= lastTip; t++) sendSlot(s, t, now);
        s.tip = lastTip;
      } else if (s.tip === 0) s.tip = lastTip;
    });
  };

  const unary = (answer: (req: Record<string, unknown>) => Record<string, unknown>, req: string, res: string): grpc.handleUnaryCall<Buffer, Buffer> => {
    const reqType = geyserType(req);
    const resType = geyserType(res);
    return (call, done) => {
      try {
        done(null, encodeAs(resType, answer(decodeAs(reqType, call.request))));
      } catch (e) {
        done({ code: grpc.status.INVALID_ARGUMENT, details: (e as Error).message });
      }
    };
  };
  const at = (c: unknown): number => tipNow() - feed.depth(typeof c === 'number' && c >= 0 && c <= 2 ? c : 0);
  const handlers = {
    Subscribe: subscribe,
    Ping: unary((r) => ({ count: r.count ?? 0 }), 'PingRequest', 'PongResponse'),
    GetSlot: unary((r) => ({ slot: at(r.commitment) }), 'GetSlotRequest', 'GetSlotResponse'),
    GetBlockHeight: unary((r) => ({ blockHeight: blockHeightOf(at(r.commitment)) }), 'GetBlockHeightRequest', 'GetBlockHeightResponse'),
    GetLatestBlockhash: unary(
      (r) => {
        const slot = at(r.commitment);
        return { slot, blockhash: blockhashOf(slot), lastValidBlockHeight: blockHeightOf(slot) + BLOCKHASH_VALID_SLOTS };
      },
      'GetLatestBlockhashRequest',
      'GetLatestBlockhashResponse',
    ),
    IsBlockhashValid: unary(
      (r) => {
        const slot = at(r.commitment);
        const issued = slotOfBlockhash(String(r.blockhash ?? ''));
        return { slot, valid: issued >= 0 && issued <= slot && slot - issued <= BLOCKHASH_VALID_SLOTS };
      },
      'IsBlockhashValidRequest',
      'IsBlockhashValidResponse',
    ),
    GetVersion: unary(() => ({ version: JSON.stringify({ version: { package: 'jumpgate-sim-grpc' } }) }), 'GetVersionRequest', 'GetVersionResponse'),
  };

  let server: grpc.Server | null = null;
  let port = opts.port ?? 0;
  const bind = async (): Promise<void> => {
    const srv = new grpc.Server();
    srv.addService(GEYSER_SERVICE, handlers);
    port = await new Promise<number>((resolve, reject) =>
      srv.bindAsync(`${host}:${port}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err === null ? resolve(p) : reject(err))),
    );
    server = srv;
    lastTip = tipNow();
    if (ticker === null) tick();
  };
  const stop = (): void => {
    if (ticker !== null) clearTimeout(ticker);
    ticker = null;
    for (const s of streams) if (s.timer !== null) clearTimeout(s.timer);
    streams.clear();
    server?.forceShutdown();
    server = null;
  };
  await bind();
  return {
    get port() {
      return port;
    },
    get url() {
      return `http://${host}:${port}`;
    },
    knobs,
    slotMs,
    streams: () => streams.size,
    get lastFromSlot() {
      return lastFromSlot;
    },
    slotStart,
    kill: () => {
      stop();
      return Promise.resolve();
    },
    restart: bind,
    close: () => {
      stop();
      return Promise.resolve();
    },
  };
}
