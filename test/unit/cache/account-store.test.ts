// The account store (src/cache/account-store.ts): exact reads at each commitment's tip, on the
// tip's fork, or a miss; then a randomized run against a model chain with forks.
import t from 'tap';
import { AccountStore, KEY_OVERHEAD_BYTES, MISS_FORK_UNKNOWN, MISS_NO_TIP, MISS_UNCOVERED, MISS_UNTRACKED } from '../../../src/cache/account-store.js';
import { stateBytes, type AccountState, type AccountValue } from '../../../src/cache/account-value.js';
import { rng } from '../../../src/tools/rng.js';

const acct = (lamports: number, size = 0): AccountValue => ({
  lamports: String(lamports),
  owner: '11111111111111111111111111111111',
  executable: false,
  rentEpoch: '18446744073709551615',
  data: Buffer.alloc(size, lamports & 0xff),
});

function linear(s: AccountStore, from: number, to: number): void {
  for (let x = from; x <= to; x++) s.slotStatus(x, x - 1, 'processed');
}

/** The read as [slot or miss, state]. */
function read(s: AccountStore, key: string, c: number): [number, AccountState | undefined] {
  const r = s.read(key, c);
  return [r, r >= 0 ? s.lastState : undefined];
}

t.test('a linear chain: anchor, then writes; confirmed and finalized lag processed', async (t) => {
  const s = new AccountStore();
  const a = acct(1);
  const w102 = acct(2);
  const w104 = acct(4);
  t.equal(s.read('k', 0), MISS_UNTRACKED);
  s.track('k', 101);
  t.equal(s.read('k', 0), MISS_NO_TIP);
  linear(s, 100, 101);
  t.equal(s.read('k', 0), MISS_UNCOVERED, 'tracked, no anchor');
  t.ok(s.anchor('k', 100, a));
  s.write('k', 102, 1, w102);
  linear(s, 102, 103);
  s.write('k', 104, 2, w104);
  linear(s, 104, 105);
  t.same(read(s, 'k', 0), [105, w104]);
  t.equal(s.read('k', 1), MISS_NO_TIP);
  s.slotStatus(103, null, 'confirmed');
  t.same(read(s, 'k', 1), [103, w102]);
  t.equal(s.read('k', 2), MISS_NO_TIP);
  s.slotStatus(101, null, 'finalized');
  t.same(read(s, 'k', 2), [101, a]);
  t.equal(s.tip(0), 105);
  t.same([s.processed, s.confirmed, s.root], [105, 103, 101]);
});

t.test('a write before the anchor is not an answer until the anchor comes', async (t) => {
  const s = new AccountStore();
  s.track('k', 101);
  const w = acct(7);
  s.write('k', 101, 5, w);
  linear(s, 100, 102);
  t.equal(s.read('k', 0), MISS_UNCOVERED);
  t.ok(s.anchor('k', 100, acct(1)));
  t.same(read(s, 'k', 0), [102, w], 'the write above the anchor counts');
  const s2 = new AccountStore();
  s2.track('k', 101);
  s2.write('k', 101, 5, w);
  linear(s2, 100, 103);
  const at103 = acct(9);
  t.ok(s2.anchor('k', 103, at103));
  t.same(read(s2, 'k', 0), [103, at103]);
  s2.slotStatus(102, null, 'confirmed');
  t.equal(s2.read('k', 1), MISS_UNCOVERED, 'at 102 the state before 101 is not known');
});

t.test('an anchor below coveredFrom - 1 or below the root is refused; at the root it replaces all below', async (t) => {
  const s = new AccountStore();
  t.notOk(s.anchor('k', 100, acct(1)), 'untracked');
  s.track('k', 101);
  linear(s, 98, 101);
  t.notOk(s.anchor('k', 99, acct(1)));
  t.equal(s.read('k', 0), MISS_UNCOVERED);
  t.ok(s.anchor('k', 100, acct(2)));
  s.write('k', 101, 1, acct(3));
  linear(s, 102, 110);
  s.slotStatus(105, null, 'finalized');
  t.notOk(s.anchor('k', 104, acct(4)), 'below the root');
  const r = acct(5);
  t.ok(s.anchor('k', 105, r));
  t.same(
    s.versionsOf('k').map((v) => [v.slot, v.writeVersion]),
    [[105, null]],
  );
  t.same(read(s, 'k', 2), [105, r]);
});

t.test('at the same slot the anchor is above every write, whatever the arrival order', async (t) => {
  const s = new AccountStore();
  s.track('k', 101);
  linear(s, 100, 101);
  const anchor = acct(10);
  t.ok(s.anchor('k', 102, anchor));
  s.write('k', 102, 7, acct(11));
  s.write('k', 102, 8, acct(12));
  s.slotStatus(102, 101, 'processed');
  t.same(read(s, 'k', 0), [102, anchor]);
  const w = acct(13);
  s.write('k', 103, 1, w);
  s.slotStatus(103, 102, 'processed');
  t.same(read(s, 'k', 0), [103, w]);
  const later = acct(14);
  s.write('k', 104, 9, later);
  s.write('k', 104, 3, acct(15));
  s.slotStatus(104, 103, 'processed');
  t.same(read(s, 'k', 0), [104, later], 'the highest write version of a slot wins, not the last arrival');
});

t.test('duplicate writes are kept once; untracked keys keep nothing', async (t) => {
  const s = new AccountStore();
  s.track('k', 101);
  s.anchor('k', 100, acct(1, 10));
  const bytes = s.bytes;
  s.write('k', 101, 4, acct(2, 50));
  const after = s.bytes;
  t.equal(after - bytes, stateBytes(acct(2, 50)));
  s.write('k', 101, 4, acct(2, 50));
  t.equal(s.bytes, after);
  t.equal(s.versionsOf('k').length, 2);
  const first = acct(3);
  s.write('k', 102, 1, first);
  s.write('k', 102, 1, acct(4));
  linear(s, 100, 102);
  t.same(read(s, 'k', 0), [102, first], 'the one kept first stays');
  s.write('other', 101, 1, acct(3));
  t.equal(s.keys, 1);
  t.equal(s.keyBytes('other'), 0);
  t.equal(s.keyBytes('k'), s.bytes);
  t.equal(s.bytes, KEY_OVERHEAD_BYTES + 2 + stateBytes(acct(1, 10)) + stateBytes(acct(2, 50)) + stateBytes(first));
  s.untrack('k');
  t.same([s.bytes, s.keys, s.read('k', 0)], [0, 0, MISS_UNTRACKED]);
});

t.test('unhold drops everything; anchors wait for a new track', async (t) => {
  const s = new AccountStore();
  s.track('k', 101);
  s.anchor('k', 100, acct(1));
  linear(s, 100, 102);
  t.equal(s.read('k', 0), 102);
  s.unhold('k');
  t.equal(s.read('k', 0), MISS_UNCOVERED);
  t.equal(s.keyBytes('k'), KEY_OVERHEAD_BYTES + 2);
  t.notOk(s.anchor('k', 102, acct(2)), 'no coverage until a new track');
  s.write('k', 103, 1, acct(3));
  t.same(s.versionsOf('k'), []);
  s.track('k', 105);
  t.notOk(s.anchor('k', 103, acct(2)), 'below the new coveredFrom - 1');
  const a = acct(4);
  t.ok(s.anchor('k', 104, a));
  linear(s, 103, 104);
  t.same(read(s, 'k', 0), [104, a]);
  s.track('k', 200);
  s.write('k', 105, 1, acct(5));
  s.slotStatus(105, 104, 'processed');
  t.same(read(s, 'k', 0), [105, acct(5)], 'a track of a held key keeps its coverage');
  s.unholdAll();
  t.equal(s.read('k', 0), MISS_UNCOVERED);
  t.equal(s.bytes, KEY_OVERHEAD_BYTES + 2);
});

t.test('a dead slot drops its writes and processed goes back', async (t) => {
  const s = new AccountStore();
  s.track('k', 101);
  const a = acct(1);
  s.anchor('k', 100, a);
  linear(s, 100, 105);
  s.slotStatus(104, null, 'confirmed');
  s.write('k', 106, 1, acct(6, 100));
  s.slotStatus(106, 105, 'processed');
  s.write('k', 107, 1, acct(7, 100));
  s.slotStatus(107, 106, 'processed');
  t.same(read(s, 'k', 0), [107, acct(7, 100)]);
  const before = s.bytes;
  s.slotStatus(106, null, 'dead');
  t.equal(s.processed, 105);
  t.same(read(s, 'k', 0), [105, a]);
  t.equal(before - s.bytes, 2 * stateBytes(acct(6, 100)));
  s.write('k', 107, 2, acct(8));
  t.equal(s.versionsOf('k').length, 1, 'a write at a dead slot is dropped');
  t.notOk(s.anchor('k', 106, acct(9)));
});

t.test('processed on fork A, then confirmed moves onto fork B: A is invisible, then pruned', async (t) => {
  const s = new AccountStore();
  s.track('k', 101);
  const a = acct(1);
  s.anchor('k', 100, a);
  linear(s, 100, 101);
  s.slotStatus(101, null, 'confirmed');
  const b102 = acct(2);
  s.write('k', 102, 1, b102);
  s.slotStatus(102, 101, 'processed'); // B
  s.write('k', 103, 1, acct(3, 64));
  s.slotStatus(103, 101, 'processed'); // A
  s.write('k', 105, 1, acct(5, 64));
  s.slotStatus(105, 103, 'processed'); // A
  s.slotStatus(104, 102, 'processed'); // B, no write
  t.same(read(s, 'k', 0), [105, acct(5, 64)]);
  t.same(read(s, 'k', 1), [101, a]);
  s.slotStatus(104, null, 'confirmed');
  t.same(read(s, 'k', 0), [104, b102], 'processed switched to B');
  t.same(read(s, 'k', 1), [104, b102]);
  const before = s.bytes;
  s.slotStatus(102, null, 'finalized');
  t.equal(before - s.bytes, 2 * stateBytes(acct(3, 64)) + stateBytes(a), 'A pruned, the anchor collapsed');
  t.same(
    s.versionsOf('k').map((v) => [v.slot, v.writeVersion]),
    [[102, null]],
  );
  t.same(read(s, 'k', 2), [102, b102]);
});

t.test('a write answers only with an anchor below it on its own fork', async (t) => {
  const s = new AccountStore();
  s.track('k', 101);
  linear(s, 100, 101);
  s.slotStatus(101, null, 'confirmed');
  t.ok(s.anchor('k', 102, acct(1))); // from a node on fork A
  s.slotStatus(102, 101, 'processed');
  s.write('k', 103, 1, acct(2));
  s.slotStatus(103, 101, 'processed'); // fork B
  s.slotStatus(103, null, 'confirmed');
  t.equal(s.read('k', 0), MISS_UNCOVERED, 'the anchor on A does not cover B');
  t.same(s.takeUnanchored(), []);
  s.slotStatus(103, null, 'finalized');
  t.same(s.takeUnanchored(), ['k'], 'its only anchor went with fork A: the caller reads it again');
  t.same(s.takeUnanchored(), []);
  t.ok(s.anchor('k', 103, acct(3)));
  t.same(read(s, 'k', 0), [103, acct(3)]);
});

t.test('a root advance collapses each key into one anchor and memory goes back', async (t) => {
  const s = new AccountStore();
  s.track('k', 101);
  s.track('j', 101);
  s.anchor('k', 100, acct(1));
  linear(s, 99, 100);
  const base = s.bytes;
  let last = acct(0);
  for (let x = 101; x <= 140; x++) {
    last = acct(x, 1000);
    s.write('k', x, 1, acct(x + 1000, 1000));
    s.write('k', x, 2, last);
    s.write('j', x, 1, acct(x, 1000)); // never anchored
    s.slotStatus(x, x - 1, 'processed');
  }
  t.ok(s.bytes > base + 80 * 1000);
  s.slotStatus(140, null, 'confirmed');
  s.slotStatus(140, null, 'finalized');
  t.same(read(s, 'k', 2), [140, last]);
  t.same(
    s.versionsOf('k').map((v) => [v.slot, v.writeVersion]),
    [[140, null]],
  );
  t.same(s.versionsOf('j'), [], 'uncovered writes at or below the root go: only an anchor at or above it can cover the key now');
  t.equal(s.bytes, base - stateBytes(acct(1)) + stateBytes(last));
  t.equal(s.slotCount, 1);
  t.equal(s.read('j', 0), MISS_UNCOVERED);
  t.ok(s.anchor('j', 140, acct(3)));
  t.equal(s.read('j', 0), 140);
});

t.test('an account deleted (null) and created again', async (t) => {
  const s = new AccountStore();
  s.track('k', 101);
  s.anchor('k', 100, null);
  linear(s, 100, 101);
  t.same(read(s, 'k', 0), [101, null], 'a missing account is a hit with null');
  const made = acct(5);
  s.write('k', 102, 1, made);
  s.slotStatus(102, 101, 'processed');
  s.write('k', 103, 1, null);
  s.slotStatus(103, 102, 'processed');
  t.same(read(s, 'k', 0), [103, null]);
  const again = acct(6);
  s.write('k', 104, 1, again);
  s.slotStatus(104, 103, 'processed');
  s.slotStatus(103, null, 'confirmed');
  s.slotStatus(102, null, 'finalized');
  t.same(
    [read(s, 'k', 0), read(s, 'k', 1), read(s, 'k', 2)],
    [
      [104, again],
      [103, null],
      [102, made],
    ],
  );
});

t.test('a version the links cannot place is a miss, not a guess', async (t) => {
  const s = new AccountStore();
  s.track('k', 50);
  t.ok(s.anchor('k', 60, acct(1)));
  s.slotStatus(100, 99, 'processed');
  t.equal(s.read('k', 0), MISS_FORK_UNKNOWN, '60 may or may not be below 99');
  s.slotStatus(100, null, 'finalized');
  t.same(s.versionsOf('k'), [], 'nor kept at the root');
  t.equal(s.read('k', 0), MISS_UNCOVERED);
});

// The randomized run: a model chain with minority forks (dying by a dead status, by a swap of
// the branches before confirmation, or abandoned and pruned by the root), ~20 keys written at
// different rates, keys tracked, anchored from the model's true state, unheld and tracked again.

interface MSlot {
  parent: number;
  state: Map<string, AccountState>;
  dead: boolean;
}

const KEYS = Array.from({ length: 20 }, (_, i) => `key${i}`);
/** Per key: how likely a slot writes it (some every slot, some rarely). */
const RATE = KEYS.map((_, i) => (i < 5 ? 0.95 : i < 10 ? 0.3 : 0.04));

function run(seed: number, steps: number, readsPerStep: number) {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const store = new AccountStore();
  const slots = new Map<number, MSlot>();
  const created: number[] = [];
  let next = 1000;
  let wv = 0;
  let mainHead = -1;
  let fork = { head: -1, point: -1, len: 0, target: 0 };
  let c = -1;
  let root = -1;
  /** Per key: undefined untracked, else coveredFrom (-1 unheld) and when its anchor was taken (-1 none). */
  const held = new Map<string, { from: number; anchoredAt: number }>();
  const out = {
    reads: 0,
    hits: 0,
    misses: [0, 0, 0, 0, 0],
    mismatches: [] as string[],
    settledReads: 0,
    settledHits: 0,
    refusedAnchors: 0,
    lostAnchors: 0,
    hitsAt: [0, 0, 0],
    forks: 0,
    dead: 0,
    swaps: 0,
    forkTips: 0,
  };
  const bad = (m: string): void => void (out.mismatches.length < 10 && out.mismatches.push(`seed ${seed}: ${m}`));

  const descends = (x: number, a: number): boolean => {
    let cur = x;
    while (cur > a) cur = slots.get(cur)?.parent ?? -1;
    return cur === a;
  };
  const ancestor = (x: number, depth: number): number => {
    for (let i = 0; i < depth && slots.has(x); i++) x = slots.get(x)!.parent;
    return slots.has(x) ? x : -1;
  };
  const modelTip = (commitment: number): number => {
    if (commitment === 2) return root;
    if (commitment === 1) return c;
    const base = c >= 0 ? c : root;
    let best = base;
    for (const [s, m] of slots) if (!m.dead && s > best && (base < 0 || descends(s, base))) best = s;
    return best;
  };
  const anchorExpected = (key: string, a: number): boolean => {
    const h = held.get(key);
    const m = slots.get(a);
    if (h === undefined || h.from < 0 || a < h.from - 1 || m?.dead === true) return false;
    return root < 0 || a === root || (a > root && (m === undefined || descends(a, root)));
  };
  const tryAnchor = (key: string, a: number, state: AccountState): void => {
    const want = anchorExpected(key, a);
    const got = store.anchor(key, a, state);
    if (got !== want) bad(`anchor ${key}@${a}: ${got}, expected ${want}`);
    if (got) held.get(key)!.anchoredAt = created.length;
    else out.refusedAnchors++;
  };

  /** Writes the slot's writes (and maybe an anchor of a node already past it) and its processed status. */
  const newSlot = (parent: number, status = true): number => {
    const slot = next;
    next += r() < 0.1 ? 2 : 1;
    const state = new Map(slots.get(parent)?.state ?? KEYS.map((k) => [k, acct(0)]));
    const writes: [string, number, AccountState][] = [];
    KEYS.forEach((k, i) => {
      if (r() >= RATE[i]!) return;
      for (let n = r() < 0.3 ? 2 : 1; n > 0; n--) {
        const v = r() < 0.1 ? (++wv, null) : acct(++wv, Math.floor(r() * 40));
        writes.push([k, wv, v]);
        state.set(k, v);
      }
    });
    if (writes.length > 0 && r() < 0.1) writes.push(pick(writes));
    for (let i = writes.length - 1; i > 0; i--) {
      const j = Math.floor(r() * (i + 1));
      [writes[i], writes[j]] = [writes[j]!, writes[i]!];
    }
    slots.set(slot, { parent, state, dead: false });
    created.push(slot);
    const early = r() < 0.25 ? pick(KEYS) : '';
    const at = Math.floor(r() * (writes.length + 1));
    for (let i = 0; i <= writes.length; i++) {
      if (i === at && early !== '' && held.get(early)?.anchoredAt === -1) tryAnchor(early, slot, state.get(early)!);
      if (i < writes.length) store.write(writes[i]![0], slot, writes[i]![1], writes[i]![2]);
    }
    if (status) store.slotStatus(slot, parent === -1 ? 999 : parent, 'processed');
    return slot;
  };

  const extendMain = (): void => {
    if (mainHead >= 0 && r() < 0.15) {
      // Two slots in flight: the second one's writes come before the first one's status.
      const a = newSlot(mainHead, false);
      const b = newSlot(a, false);
      store.slotStatus(a, mainHead, 'processed');
      store.slotStatus(b, a, 'processed');
      mainHead = b;
    } else mainHead = newSlot(mainHead);
    const conf = ancestor(mainHead, pick([1, 1, 1, 2, 3]));
    if (conf > c) {
      c = conf;
      store.slotStatus(conf, r() < 0.5 ? null : slots.get(conf)!.parent, 'confirmed');
    }
    const fin = ancestor(mainHead, 30 + Math.floor(r() * 5));
    if (fin > root) {
      root = fin;
      store.slotStatus(fin, r() < 0.5 ? null : slots.get(fin)!.parent, 'finalized');
      for (const s of slots.keys()) if (s < root) slots.delete(s);
    }
    // A fork the confirmed tip has passed can no longer win: abandoned, pruned later by the root.
    if (fork.head >= 0 && !descends(fork.point, c)) fork.head = -1;
  };

  const kill = (slot: number): void => {
    for (const [s, m] of slots) if (descends(s, slot)) m.dead = true;
    store.slotStatus(slot, null, 'dead');
    out.dead++;
    fork.head = -1;
  };

  for (let step = 0; step < steps; step++) {
    const x = r();
    if (mainHead < 0) extendMain();
    else if (fork.head >= 0 && x < 0.35 && fork.len < fork.target) {
      fork.head = newSlot(fork.head);
      fork.len++;
    } else if (fork.head >= 0 && x < 0.42) {
      let s = fork.head;
      for (let back = Math.floor(r() * fork.len); back > 0; back--) s = slots.get(s)!.parent;
      kill(s);
    } else if (fork.head >= 0 && x < 0.47 && descends(fork.point, c)) {
      // The fork wins: the old main branch is the one left behind.
      [mainHead, fork.head] = [fork.head, -1];
      out.swaps++;
    } else if (fork.head < 0 && x < 0.15) {
      const point = r() < 0.5 ? mainHead : ancestor(mainHead, 1);
      if (point > root && point >= c) {
        fork = { head: newSlot(point), point, len: 1, target: 1 + Math.floor(r() * 3) };
        out.forks++;
      } else extendMain();
    } else extendMain();

    if (r() < 0.05) store.slotStatus(pick(created.slice(-5)), null, 'processed');
    // As the feed does: a key whose anchor went with a fork is read again.
    for (const k of store.takeUnanchored()) {
      const h = held.get(k);
      if (h === undefined || h.from < 0 || h.anchoredAt < 0) bad(`${k} reported unanchored while not anchored`);
      else [h.anchoredAt, out.lostAnchors] = [-1, out.lostAnchors + 1];
    }
    for (const k of KEYS) {
      const h = held.get(k);
      const y = r();
      if (h === undefined) {
        if (y < 0.1) {
          held.set(k, { from: next + Math.floor(r() * 3), anchoredAt: -1 });
          store.track(k, held.get(k)!.from);
        }
      } else if (h.from < 0) {
        if (y < 0.2) store.track(k, (h.from = next + Math.floor(r() * 3)));
      } else if (y < 0.004) {
        held.delete(k);
        store.untrack(k);
      } else if (y < 0.012) {
        h.from = -1;
        h.anchoredAt = -1;
        store.unhold(k);
      } else if (h.anchoredAt === -1 && y < 0.4) {
        const a = r() < 0.7 ? modelTip(0) : pick(created.slice(-6));
        const m = slots.get(a);
        if (m !== undefined) tryAnchor(k, a, m.state.get(k)!);
      }
    }
    if (r() < 0.002) {
      store.unholdAll();
      for (const h of held.values()) [h.from, h.anchoredAt] = [-1, -1];
    }

    if (!descends(mainHead, store.tip(0))) out.forkTips++;
    for (let cm = 0; cm < 3; cm++) if (store.tip(cm) !== modelTip(cm)) bad(`step ${step}: tip(${cm}) ${store.tip(cm)}, model ${modelTip(cm)}`);
    for (let i = 0; i < readsPerStep; i++) {
      const key = pick(KEYS);
      const cm = Math.floor(r() * 3);
      const got = store.read(key, cm);
      const h = held.get(key);
      const settled = h !== undefined && h.anchoredAt >= 0 && created.length - h.anchoredAt > 40;
      out.reads++;
      if (settled) out.settledReads++;
      if (got < 0) {
        out.misses[-got]!++;
        if ((h === undefined) !== (got === MISS_UNTRACKED)) bad(`step ${step}: ${key} miss ${got}, tracked ${h !== undefined}`);
        continue;
      }
      out.hits++;
      out.hitsAt[cm]!++;
      if (settled) out.settledHits++;
      const want = slots.get(got)?.state.get(key);
      if (got !== store.tip(cm) || want === undefined || store.lastState !== want)
        bad(`step ${step}: ${key}@${cm} answered slot ${got} ${JSON.stringify(store.lastState)}, model ${JSON.stringify(want)} (tip ${store.tip(cm)})`);
    }
    if (step % 97 === 0) {
      let sum = 0;
      for (const k of KEYS) {
        const v = store.versionsOf(k);
        const expect = held.has(k) ? KEY_OVERHEAD_BYTES + 2 * k.length + v.reduce((n, x) => n + stateBytes(x.state), 0) : 0;
        if (store.keyBytes(k) !== expect) bad(`step ${step}: keyBytes(${k}) ${store.keyBytes(k)}, versions say ${expect}`);
        sum += expect;
      }
      if (store.bytes !== sum) bad(`step ${step}: bytes ${store.bytes}, keys say ${sum}`);
      if (root >= 0 && store.slotCount > 60) bad(`step ${step}: ${store.slotCount} slots kept above the root`);
    }
  }
  return out;
}

t.test('randomized against a model chain with forks: every hit is the true state at the tip on its fork', async (t) => {
  let reads = 0;
  for (const seed of [1, 2, 3, 4]) {
    const o = run(seed, 1500, 20);
    t.same(o.mismatches, [], `seed ${seed}: no mismatch`);
    t.ok(o.lostAnchors > 0, `seed ${seed}: some anchors lost with a fork`);
    t.ok(
      o.forks > 50 && o.dead > 10 && o.swaps > 10 && o.forkTips > 50,
      `seed ${seed}: ${o.forks} forks, ${o.dead} dead, ${o.swaps} won, ${o.forkTips} steps with the processed tip on a fork`,
    );
    t.ok(Math.min(...o.hitsAt) > 1000, `seed ${seed}: hits by commitment ${o.hitsAt.join('/')}`);
    t.ok(o.settledHits > 0.95 * o.settledReads, `seed ${seed}: ${o.settledHits} hits of ${o.settledReads} reads of keys anchored a while ago`);
    t.ok(
      o.hits > o.reads / 2,
      `seed ${seed}: ${o.hits} hits of ${o.reads} reads; misses ${o.misses.join('/')}; ${o.refusedAnchors} anchors refused, ${o.lostAnchors} lost with a fork`,
    );
    reads += o.reads;
  }
  t.ok(reads >= 100_000, `${reads} reads`);
});
