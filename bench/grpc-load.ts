// Child process of the `grpc` bench (grpc.ts): N raw subscribers of everything through the
// gateway, off the measuring process's event loop. Each counts the updates of tips [from, to]
// by dedup key; once every subscriber has read past `to`, one JSON line reports the updates
// delivered and, against the generated feed, the missing and duplicated ones.
//   node grpc-load.js TARGET TOKEN COUNT FROM TO SLOT_MS

import * as grpc from '@grpc/grpc-js';
import { encodeAs, geyserType } from '../src/grpc/proto.js';
import { KIND_SLOT, readUpdate } from '../src/grpc/update.js';
import { COMMITMENT_DEPTH, GeneratedFeed } from '../src/tools/sim-grpc/feed.js';
import { trueSlot } from '../src/tools/sim/chain.js';

const [target, token, countText, fromText, toText, slotMsText] = process.argv.slice(2);
const count = Number(countText);
const from = Number(fromText);
const to = Number(toText);
const slotMs = Number(slotMsText);
const id = (b: Buffer): Buffer => b;
const request = encodeAs(geyserType('SubscribeRequest'), { slots: { s: {} }, accounts: { a: {} }, transactions: { t: {} }, blocksMeta: { m: {} } });

const counts: Map<string, number>[] = [];
/** Streams that ended with an error, by status and details. */
const errors = new Map<string, number>();
const calls: grpc.ClientDuplexStream<Buffer, Buffer>[] = [];
const clients: grpc.Client[] = [];
const md = new grpc.Metadata();
md.set('x-token', token!);
/** The highest tip each subscriber has seen: the tally waits until every one is past `to`. */
const newest: number[] = [];
for (let i = 0; i < count; i++) {
  newest.push(0);
  const seen = new Map<string, number>();
  counts.push(seen);
  // A connection each, as separate subscribers have.
  const client = new grpc.Client(target!, grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
  clients.push(client);
  const call = client.makeBidiStreamRequest('/geyser.Geyser/Subscribe', id, id, md);
  call.on('error', (e: grpc.ServiceError) => {
    const k = `${grpc.status[e.code] ?? e.code}: ${e.details}`;
    errors.set(k, (errors.get(k) ?? 0) + 1);
  });
  call.on('data', (b: Buffer) => {
    const u = readUpdate(b);
    const tip = u.kind === KIND_SLOT ? u.slot + COMMITMENT_DEPTH[Math.min(u.status, 2) as 0 | 1 | 2] : u.slot;
    if (tip > newest[i]!) newest[i] = tip;
    if (tip < from || tip > to) return;
    const key = `${u.slot}:${u.dedupKey()}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  });
  call.write(request);
  calls.push(call);
}
process.stdout.write('subscribed\n');

const waitMs = (to - trueSlot(slotMs)) * slotMs + 1500;
/** How long past its end the window may take to be read (a backlog in this process, not lost updates). */
const DRAIN_MS = 15_000;
const started = Date.now();
// Tips after `to` prove `to` was read whole: a tip's updates arrive within its slot's jitter.
const drained = (): boolean => newest.every((n) => n >= to + 2);
const tally = (): void => {
  if (!drained() && Date.now() - started < waitMs + DRAIN_MS) {
    setTimeout(tally, 100);
    return;
  }
  const feed = new GeneratedFeed();
  const want: string[] = [];
  for (let tip = from; tip <= to; tip++) for (const u of [...feed.slotUpdates(tip), ...feed.blockUpdates(tip)]) want.push(`${u.slot}:${u.dedupKey()}`);
  let delivered = 0;
  let missing = 0;
  let duplicated = 0;
  for (const seen of counts) {
    for (const n of seen.values()) delivered += n;
    for (const k of want) {
      const n = seen.get(k) ?? 0;
      if (n === 0) missing++;
      if (n > 1) duplicated += n - 1;
    }
  }
  // Subscribers that received nothing of the window (a stream that never opened or ended).
  const silent = counts.filter((seen) => seen.size === 0).length;
  const drainMs = Math.max(0, Date.now() - started - waitMs);
  process.stdout.write(JSON.stringify({ delivered, missing, duplicated, silent, drainMs, errors: Object.fromEntries(errors) }) + '\n');
  for (const c of calls) c.cancel();
  for (const c of clients) c.close();
  process.exit(0);
};
setTimeout(tally, Math.max(0, waitMs));
