// The histogram wrapper: percentiles, clamping, merge, encode/decode, window rotation; and
// the fixed Prometheus buckets.

import t from 'tap';
import { Buckets } from '../../../src/metrics/latency-buckets.js';
import * as hdr from 'hdr-histogram-js';
import { LatencyHistogram, RollingHistogram, useIntegerIndex } from '../../../src/metrics/histogram.js';

t.test('percentiles of 1..10000 µs are within the resolution', async (t) => {
  const h = new LatencyHistogram({ digits: 3 });
  t.equal(h.count, 0);
  t.same(h.summary(), { count: 0, p50: 0, p90: 0, p99: 0, p999: 0, max: 0 }, 'empty summary is zeros');
  for (let v = 1; v <= 10_000; v++) h.record(v);
  const s = h.summary();
  t.equal(s.count, 10_000);
  const near = (got: number, want: number): boolean => Math.abs(got - want) <= want * 0.001 + 1;
  t.ok(near(s.p50, 5000), `p50 ${s.p50}`);
  t.ok(near(s.p90, 9000), `p90 ${s.p90}`);
  t.ok(near(s.p99, 9900), `p99 ${s.p99}`);
  t.ok(near(s.p999, 9990), `p99.9 ${s.p999}`);
  t.ok(near(s.max, 10_000), `max ${s.max}`);
  t.ok(near(h.percentile(25), 2500));
});

t.test('out-of-range values are clamped, fractions rounded', async (t) => {
  const h = new LatencyHistogram({ highestUs: 1_000_000, digits: 2 });
  h.record(-5);
  h.record(0.4);
  h.record(5e12);
  h.record(Number.POSITIVE_INFINITY);
  t.equal(h.count, 4, 'nothing thrown, everything counted');
  t.equal(h.percentile(50), 0, 'negatives and sub-µs values count as 0');
  t.ok(h.summary().max >= 990_000 && h.summary().max <= 1_010_000, `huge values count as the highest (${h.summary().max})`);
});

t.test('add merges; encode/decode round-trips', async (t) => {
  const a = new LatencyHistogram();
  const b = new LatencyHistogram();
  for (let i = 0; i < 100; i++) a.record(1000);
  for (let i = 0; i < 100; i++) b.record(3000);
  a.add(b);
  t.equal(a.count, 200);
  t.ok(Math.abs(a.percentile(25) - 1000) <= 1);
  t.ok(Math.abs(a.percentile(75) - 3000) <= 3);
  const text = a.encode();
  t.type(text, 'string');
  t.match(text, /^[A-Za-z0-9+/=]+$/, 'base64');
  const back = LatencyHistogram.decode(text);
  t.equal(back.count, 200);
  const { max: maxA, ...pa } = a.summary();
  const { max: maxB, ...pb } = back.summary();
  t.same(pb, pa, 'same percentiles after decoding');
  t.ok(Math.abs(maxA - maxB) <= 3, 'max within the resolution (decoding keeps bucket boundaries)');
  back.add(a);
  t.equal(back.count, 400, 'a decoded histogram merges with a live one');
  a.reset();
  t.equal(a.count, 0);
});

t.test('rolling window: slices rotate out, reads see the last 50–60 s', async (t) => {
  const r = new RollingHistogram({ windowMs: 60_000, slices: 6 });
  t.equal(r.sliceMs, 10_000);
  r.record(100, 0); // slice 0
  r.record(100, 9_999); // slice 0
  r.record(200, 30_000); // slice 3
  t.equal(r.summary(30_000).count, 3, 'all inside the window');
  t.equal(r.summary(59_999).count, 3, 'slice 0 still counts at 59.999 s');
  t.equal(r.summary(60_000).count, 1, 'slice 0 leaves at 60 s');
  t.equal(r.summary(89_999).count, 1);
  t.equal(r.summary(90_000).count, 0, 'slice 3 leaves at 90 s');
  // Recording after a long pause reuses the ring without old counts leaking in.
  r.record(300, 120_000); // slice 12: same ring entry as slices 0 and 6
  const s = r.summary(120_000);
  t.equal(s.count, 1, 'only the new value');
  t.ok(Math.abs(s.p50 - 300) <= 1);
  t.type(r.encode(120_000), 'string');
});

t.test('rolling window reads are repeatable and do not disturb recording', async (t) => {
  const r = new RollingHistogram({ windowMs: 1000, slices: 4, digits: 2 });
  for (let ms = 0; ms < 1000; ms += 10) r.record(ms * 1000, ms);
  const a = r.summary(999);
  const b = r.summary(999);
  t.same(a, b);
  t.equal(a.count, 100);
  r.record(5, 999);
  t.equal(r.summary(999).count, 101);
});

t.test('rolling options are checked', async (t) => {
  t.throws(() => new RollingHistogram({ slices: 0 }), /slices must be an integer >= 1/);
  t.throws(() => new RollingHistogram({ windowMs: 0 }), /windowMs must be > 0/);
});

t.test('prometheus buckets count each value once, in the first bound >= it', async (t) => {
  const b = new Buckets([0.001, 0.01, 0.1]);
  for (const ms of [0.5, 1, 1.01, 10, 50, 100, 101, 5000]) b.observeMs(ms);
  t.same([...b.counts], [2, 2, 2, 2], '≤1 ms: 0.5, 1 | ≤10: 1.01, 10 | ≤100: 50, 100 | +Inf: 101, 5000');
  t.equal(b.count, 8);
  t.ok(Math.abs(b.sumMs - 5263.51) < 1e-9);
});

t.test('the integer counts index agrees with the library for every digits setting', async (t) => {
  for (const digits of [1, 2, 3, 4, 5] as const) {
    for (const highest of [1000, 60_000_000, 600_000_000]) {
      const ours = hdr.build({
        bitBucketSize: 32,
        autoResize: false,
        lowestDiscernibleValue: 1,
        highestTrackableValue: highest,
        numberOfSignificantValueDigits: digits,
      });
      const lib = hdr.build({
        bitBucketSize: 32,
        autoResize: false,
        lowestDiscernibleValue: 1,
        highestTrackableValue: highest,
        numberOfSignificantValueDigits: digits,
      });
      useIntegerIndex(ours);
      const a = ours as unknown as { countsArrayIndex(v: number): number };
      const b = lib as unknown as { countsArrayIndex(v: number): number };
      t.not(a.countsArrayIndex, b.countsArrayIndex, `digits ${digits}: installed`);
      let bad = 0;
      const check = (v: number): void => {
        if (a.countsArrayIndex(v) !== b.countsArrayIndex(v)) bad++;
      };
      for (let v = 0; v < 5000 && v <= highest; v++) check(v);
      for (let p = 1; 2 ** p <= highest; p++) for (const d of [-1, 0, 1]) check(2 ** p + d);
      let x = 12345;
      for (let i = 0; i < 20_000; i++) {
        x = (x * 1103515245 + 12345) % 2 ** 31;
        check(x % (highest + 1));
      }
      t.equal(bad, 0, `digits ${digits}, highest ${highest}: same index for every value tried`);
      for (let v = 0; v <= highest; v += Math.max(1, Math.floor(highest / 997))) {
        ours.recordValue(v);
        lib.recordValue(v);
      }
      t.equal(ours.getValueAtPercentile(99), lib.getValueAtPercentile(99), `digits ${digits}: same p99 after recording`);
    }
  }
  const big = hdr.build({
    bitBucketSize: 'packed',
    autoResize: false,
    lowestDiscernibleValue: 1,
    highestTrackableValue: 2 ** 40,
    numberOfSignificantValueDigits: 3,
  });
  const before = (big as unknown as { countsArrayIndex: unknown }).countsArrayIndex;
  useIntegerIndex(big);
  t.equal((big as unknown as { countsArrayIndex: unknown }).countsArrayIndex, before, 'ranges past 2^31 keep the library index');
});
