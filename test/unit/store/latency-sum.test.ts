// Latency sums (src/store/sql/latency-sum.ts) against the HDR library: whatever is added —
// compressed or uncompressed texts, empty histograms, another layout — the sum holds the counts
// LatencyHistogram.decode(first).add(…) holds: the same percentiles, and its compressed
// encoding is the library's text byte for byte.

import t from 'tap';
import { LatencyHistogram } from '../../../src/metrics/histogram.js';
import { LatencySum } from '../../../src/store/sql/latency-sum.js';
import { rng } from '../../../src/tools/rng.js';

const PERCENTILES = [0, 1, 50, 90, 99, 99.9, 100];

function random(next: () => number, digits: 2 | 3 = 2): string {
  const h = new LatencyHistogram({ digits, highestUs: 600_000_000 });
  const n = Math.floor(next() * 40);
  // From 1 µs to minutes, counts up to a million: long LEB128 words and long zero runs.
  for (let i = 0; i < n; i++) h.record(Math.floor(Math.exp(next() * 19)), 1 + Math.floor(next() ** 6 * 1_000_000));
  return h.encode();
}

function same(t: Test, sum: LatencySum, ref: LatencyHistogram, what: string): void {
  t.equal(sum.count, ref.count, `${what}: count`);
  t.same(
    PERCENTILES.map((p) => sum.percentile(p)),
    PERCENTILES.map((p) => ref.percentile(p)),
    `${what}: percentiles`,
  );
  t.equal(sum.encodeCompressed(), ref.encode(), `${what}: the library's encoding`);
}

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

t.test('sums of random histograms equal the library’s decode and add', async (t) => {
  const next = rng(99);
  const pool = Array.from({ length: 40 }, () => random(next));
  pool.push(new LatencyHistogram({ digits: 2 }).encode());
  for (let trial = 0; trial < 60; trial++) {
    const picked = Array.from({ length: 1 + Math.floor(next() * 30) }, () => pool[Math.floor(next() * pool.length)]!);
    const ref = LatencyHistogram.decode(picked[0]!);
    for (const e of picked.slice(1)) ref.add(LatencyHistogram.decode(e));
    const sum = new LatencySum();
    for (const e of picked) sum.add(e);
    same(t, sum, ref, `trial ${trial} (${picked.length} histograms)`);
    // The uncompressed text reads back to the same counts, alone or added to compressed ones.
    const again = new LatencySum();
    again.add(sum.encode()!);
    same(t, again, ref, `trial ${trial}, uncompressed round trip`);
    const mixed = new LatencySum();
    mixed.add(picked[0]!);
    const rest = new LatencySum();
    for (const e of picked.slice(1)) rest.add(e);
    if (picked.length > 1) mixed.add(rest.encode()!);
    same(t, mixed, ref, `trial ${trial}, compressed plus uncompressed`);
  }
});

t.test('a histogram of another layout is added through the library', async (t) => {
  const next = rng(7);
  const two = random(next, 2);
  const three = random(next, 3);
  const ref = LatencyHistogram.decode(two);
  ref.add(LatencyHistogram.decode(three));
  const sum = new LatencySum();
  sum.add(two);
  sum.add(three);
  same(t, sum, ref, 'digits 2, then 3');
  const ref3 = LatencyHistogram.decode(three);
  ref3.add(LatencyHistogram.decode(two));
  const sum3 = new LatencySum();
  sum3.add(three);
  sum3.add(two);
  same(t, sum3, ref3, 'the first histogram decides the layout');
});

t.test('empty sums and bad texts', async (t) => {
  const s = new LatencySum();
  t.equal(s.count, 0);
  t.equal(s.percentile(50), 0);
  t.equal(s.encode(), null);
  t.equal(s.encodeCompressed(), null);
  t.throws(() => s.add('bm90IGEgaGlzdG9ncmFt'), /not an HdrHistogram V2 encoding/);
  t.throws(() => s.add(''), /not an HdrHistogram V2 encoding/);
});
