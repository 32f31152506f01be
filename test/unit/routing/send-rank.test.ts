// Landing-aware send routing (docs/landing.md "Sends go where they land"): the control plane's
// ranking turns decayed outcomes into scores and positions, and a send's pick goes to the best
// ranked node but for the explored share, unexplored nodes first.

import t from 'tap';
import { SendRanking, type RankingSettings } from '../../../src/landing/ranking.js';
import { pickSender, RankCell, RANK_POSITION, RANK_SAMPLES, RANK_SCORE, takeExplored } from '../../../src/routing/send-rank.js';
import { FakeNode, type FakeNodeSpec } from '../../helpers/fake-node.js';

class RankedFake extends FakeNode {
  readonly rank = new RankCell();
}

function nodes(specs: readonly FakeNodeSpec[]): RankedFake[] {
  return specs.map((s, i) => new RankedFake(i, s));
}

const SETTINGS: RankingSettings = { enabled: true, halfLifeMs: 20_000, overdueSlots: 20, fallbackSlots: 4, minSamples: 8, exploreShare: 0.1, slotWeight: 0.01 };

function ranking(ns: RankedFake[], settings: Partial<RankingSettings> = {}, clock = { now: 0 }): SendRanking {
  return new SendRanking(
    () => ({ ...SETTINGS, ...settings }),
    () => ns,
    () => clock.now,
  );
}

function shares(ns: RankedFake[], picks: number, exclude = 0): number[] {
  const counts = ns.map(() => 0);
  for (let i = 0; i < picks; i++) {
    const n = pickSender(ns, exclude, { exploreShare: 0.1, minSamples: 8 });
    if (n !== null) counts[ns.indexOf(n)]!++;
  }
  return counts.map((c) => c / picks);
}

t.test('scores: share in time with one success and one miss assumed, less slotWeight per mean slot; positions from 1', async (t) => {
  const ns = nodes([{}, {}, {}]);
  const r = ranking(ns);
  r.add({ n0: { inTime: 98, late: 0, slots: 196 }, n1: { inTime: 60, late: 40, slots: 60 }, n2: { inTime: 3, late: 1, slots: 3 } });
  t.equal(ns[0]!.rank.get(RANK_SCORE), 99 / 100 - 0.01 * 2);
  t.equal(ns[1]!.rank.get(RANK_SCORE), 61 / 102 - 0.01 * 1);
  t.equal(ns[0]!.rank.get(RANK_POSITION), 1);
  t.equal(ns[1]!.rank.get(RANK_POSITION), 2);
  t.equal(ns[2]!.rank.get(RANK_POSITION), 0, 'four samples: not ranked yet');
  const v = r.view();
  t.match(v.n0, { position: 1, samples: 98, includedPct: 100, meanSlots: 2 });
  t.match(v.n0!.reason, /100% of recent sends in a block within 20 slots, 2 slots on average/);
  t.match(v.n2, { position: null, samples: 4 });
  t.match(v.n2!.reason, /exploring/);
  r.add({ n0: { inTime: -1, late: 0, slots: 0 } as never, nX: 'junk' as never });
  t.equal(ns[0]!.rank.get(RANK_SAMPLES), 98, 'malformed samples are left out whole');
});

t.test('outcomes fade with the half-life: a node that stops landing loses its place', async (t) => {
  const ns = nodes([{}, {}]);
  const clock = { now: 0 };
  const r = ranking(ns, { halfLifeMs: 10_000 }, clock);
  r.add({ n0: { inTime: 95, late: 5, slots: 100 }, n1: { inTime: 12, late: 8, slots: 12 } });
  t.equal(ns[0]!.rank.get(RANK_POSITION), 1);
  clock.now = 10_000;
  r.add({});
  t.equal(ns[0]!.rank.get(RANK_SAMPLES), 50, 'half of it after one half-life');
  // n0 degrades: every send of the next 20 s is late.
  for (let s = 1; s <= 20; s++) {
    clock.now = 10_000 + s * 1000;
    r.add({ n0: { inTime: 0, late: 10, slots: 0 }, n1: { inTime: 1, late: 1, slots: 1 } });
  }
  t.equal(ns[1]!.rank.get(RANK_POSITION), 1, 'the other node ranks first now');
  t.equal(ns[0]!.rank.get(RANK_POSITION), 2);
});

t.test('picks: the best node but for the explored share; unexplored nodes are explored first', async (t) => {
  const ns = nodes([{}, {}, {}]);
  const r = ranking(ns);
  r.add({ n0: { inTime: 50, late: 50, slots: 50 }, n1: { inTime: 95, late: 5, slots: 95 } });
  const s = shares(ns, 20_000);
  t.ok(s[1]! > 0.87 && s[1]! < 0.93, `best node ${s[1]!.toFixed(3)}`);
  t.ok(s[2]! > 0.07, `the unexplored node gets the explored share: ${s[2]!.toFixed(3)}`);
  t.equal(s[0], 0, 'a ranked non-best node is not explored while an unexplored one is left');
  r.add({ n2: { inTime: 15, late: 5, slots: 15 } });
  const s2 = shares(ns, 20_000);
  t.ok(s2[0]! > 0.03 && s2[2]! > 0.03, `every other node explored: ${s2.map((x) => x.toFixed(3)).join(' ')}`);
  t.equal(pickSender(ns, ns[1]!.bit, { exploreShare: 0, minSamples: 8 }), ns[2], 'a tried node is excluded: the next best');
  // Each pick says whether it explored (the tracker falls such a send back to the best node), once.
  let explored = 0;
  for (let i = 0; i < 2000; i++) {
    const n = pickSender(ns, 0, { exploreShare: 0.1, minSamples: 8 });
    const e = takeExplored();
    t.equal(e, n !== ns[1], 'explored exactly when not the best');
    if (e) explored++;
    t.equal(takeExplored(), false, 'reading clears it');
  }
  t.ok(explored > 100 && explored < 300, `${explored} of 2000 explored`);
});

t.test('picks: tiers first; nothing ranked means default routing decides (null)', async (t) => {
  const ns = nodes([{ state: 'lagging' }, {}, { drained: true }]);
  t.equal(pickSender(ns, 0, { exploreShare: 0.1, minSamples: 8 }), null, 'no figures yet');
  const r = ranking(ns);
  r.add({ n0: { inTime: 100, late: 0, slots: 0 }, n1: { inTime: 10, late: 10, slots: 10 }, n2: { inTime: 100, late: 0, slots: 0 } });
  for (let i = 0; i < 200; i++) t.equal(pickSender(ns, 0, { exploreShare: 0.1, minSamples: 8 }), ns[1], 'the only healthy node, however it ranks');
  t.equal(pickSender(ns, ns[1]!.bit, { exploreShare: 0.1, minSamples: 8 }), ns[0], 'a lagging node when the healthy one was tried');
  t.equal(pickSender(ns, ns[0]!.bit | ns[1]!.bit, { exploreShare: 0.1, minSamples: 8 }), null, 'a drained node never');
});
