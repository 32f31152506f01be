// The account cache's feed against a stand-in hub and node: a hot key joins the filter, is
// covered from the pong on and anchored by one read at or past that point; a source gap unholds
// every key and holds them again; an idle key leaves the filter; a seed that cannot reach the
// covered slot retries, and a key whose data is too large is not held.

import t from 'tap';
import { AccountStore } from '../../../src/cache/account-store.js';
import { EV_ANCHOR, EV_TRACK, EV_UNHOLD, EV_UNTRACK, type CacheEvent } from '../../../src/cache/cache-events.js';
import { KeyDirectory } from '../../../src/cache/key-directory.js';
import { CacheFeed } from '../../../src/grpc/cache-feed.js';
import type { FeedTap } from '../../../src/grpc/feed.js';
import type { GrpcHub } from '../../../src/grpc/hub.js';
import { encodeAs, geyserType } from '../../../src/grpc/proto.js';
import type { SourceLink } from '../../../src/grpc/source.js';
import { readUpdate } from '../../../src/grpc/update.js';
import { silentLogger } from '../../../src/log.js';
import type { UpstreamNode } from '../../../src/upstream/node.js';
import { eventually } from '../../helpers/eventually.js';

const KEY = '4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T';
const LINK = { id: 'src0' } as SourceLink;
const update = geyserType('SubscribeUpdate');

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

function harness(t: Test, opts: { nodeSlot: number; data?: number; idleMs?: number }) {
  let tap: FeedTap | null = null;
  const pings: number[] = [];
  const requests: string[][] = [];
  const feed = {
    taps: new Set<FeedTap>(),
    filtersChanged: () => requests.push([...(tap?.accountKeys ?? [])]),
    ping: (id: number) => (pings.push(id), 1),
  };
  const hub = { addTap: (_c: number, x: FeedTap) => ((tap = x), feed) } as unknown as GrpcHub;
  const asked: string[] = [];
  let nodeSlot = opts.nodeSlot;
  const data = Buffer.alloc(opts.data ?? 4, 1).toString('base64');
  const node = {
    id: 'n0',
    path: '/',
    state: 'healthy',
    chain: { slot: () => nodeSlot },
    probes: {
      post: async (_p: string, body: string) => {
        asked.push(body);
        const min = (JSON.parse(body) as { params: [unknown, { minContextSlot: number }] }).params[1].minContextSlot;
        if (nodeSlot < min)
          return {
            status: 200,
            text: `{"jsonrpc":"2.0","error":{"code":-32016,"message":"Minimum context slot has not been reached","data":{"contextSlot":${nodeSlot}}},"id":1}`,
          };
        return {
          status: 200,
          text: `{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.1.0","slot":${nodeSlot}},"value":[{"data":["${data}","base64"],"executable":false,"lamports":5,"owner":"11111111111111111111111111111111","rentEpoch":18446744073709551615,"space":${opts.data ?? 4}}]},"id":1}`,
        };
      },
    },
  } as unknown as UpstreamNode;
  const events: CacheEvent[] = [];
  const store = new AccountStore();
  const directory = new KeyDirectory({ hotAfterReads: 1, idleMs: opts.idleMs ?? 60_000, maxKeys: 10 });
  const cf = new CacheFeed({
    hub,
    store,
    directory,
    nodes: () => [node],
    maxBytes: 1 << 20,
    maxAccountBytes: 100,
    publish: (e) => events.push(...e),
    log: silentLogger(),
  });
  t.teardown(() => cf.close());
  const slot = (s: number): void => tap!.update(readUpdate(encodeAs(update, { slot: { slot: s, parent: s - 1, status: 0 } })));
  return { cf, tap: () => tap!, pings, requests, asked, events, store, slot, setNodeSlot: (s: number) => (nodeSlot = s) };
}

t.test('hot key: filter, ping, covered past the pong, one read at or past it', async (t) => {
  const h = harness(t, { nodeSlot: 110 });
  h.slot(100);
  h.cf.reads(new Map([[KEY, 1]]));
  t.same(h.requests.at(-1), [KEY], 'the key joined the filter');
  t.same(h.pings, [1], 'then a ping');
  h.slot(101);
  h.tap().pong(LINK, 1);
  await eventually('the anchor', () => h.events.some((e) => e.t === EV_ANCHOR));
  const track = h.events.find((e) => e.t === EV_TRACK);
  t.same(track, { t: EV_TRACK, key: KEY, from: 104 }, 'covered from 3 slots past the highest slot seen at the pong');
  t.match(h.asked[0], /"commitment":"processed","minContextSlot":103/, 'the read asks for the slot before coverage at least');
  const anchor = h.events.find((e) => e.t === EV_ANCHOR) as Extract<CacheEvent, { t: typeof EV_ANCHOR }>;
  t.equal(anchor.slot, 110);
  t.equal(anchor.state?.lamports, '5');
  t.equal(anchor.apiVersion, '2.1.0');
  t.ok(h.events.indexOf(track!) < h.events.indexOf(anchor), 'tracked before anchored');
});

t.test('a node not there yet is asked again until it is', async (t) => {
  const h = harness(t, { nodeSlot: 100 });
  h.slot(100);
  h.cf.reads(new Map([[KEY, 1]]));
  h.tap().pong(LINK, 1);
  await eventually('a first refused read', () => h.asked.length >= 1);
  t.notOk(h.events.some((e) => e.t === EV_ANCHOR));
  h.setNodeSlot(103);
  await eventually('the anchor once the node reached the covered slot', () => h.events.some((e) => e.t === EV_ANCHOR), 5000);
  t.ok(h.asked.length >= 2);
  t.equal(h.cf.figures.seedFailures >= 1, true);
});

t.test('a source gap unholds every key and holds them again', async (t) => {
  const h = harness(t, { nodeSlot: 120 });
  h.slot(100);
  h.cf.reads(new Map([[KEY, 1]]));
  h.tap().pong(LINK, 1);
  await eventually('the anchor', () => h.events.some((e) => e.t === EV_ANCHOR));
  h.slot(110);
  h.tap().gap(LINK);
  await eventually('the unhold', () => h.events.some((e) => e.t === EV_UNHOLD && e.key === ''));
  t.same(h.pings, [1, 2], 'pinged again');
  h.tap().pong(LINK, 2);
  await eventually('a second anchor', () => h.events.filter((e) => e.t === EV_ANCHOR).length === 2);
  const tracks = h.events.filter((e) => e.t === EV_TRACK);
  t.same(tracks.at(-1), { t: EV_TRACK, key: KEY, from: 113 }, 'covered again from past the gap');
  t.equal(h.cf.figures.gaps, 1);
});

t.test('an idle key leaves the filter; a large account is not held', async (t) => {
  const h = harness(t, { nodeSlot: 120, idleMs: 1000 });
  h.slot(100);
  h.cf.reads(new Map([[KEY, 1]]));
  h.tap().pong(LINK, 1);
  await eventually('the anchor', () => h.events.some((e) => e.t === EV_ANCHOR));
  await eventually('dropped after idleMs', () => h.events.some((e) => e.t === EV_UNTRACK), 5000);
  t.same(h.requests.at(-1), [], 'out of the filter');
  t.equal(h.cf.figures.evictions, 1);

  const big = harness(t, { nodeSlot: 120, data: 500 });
  big.slot(100);
  big.cf.reads(new Map([[KEY, 1]]));
  big.tap().pong(LINK, 1);
  await eventually('dropped: more data than maxAccountBytes', () => big.events.some((e) => e.t === EV_UNTRACK));
  t.notOk(big.events.some((e) => e.t === EV_ANCHOR));
});
