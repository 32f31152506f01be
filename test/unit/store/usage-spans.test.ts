// How a time range is cut into roll-up rows (src/store/sql/usage-spans.ts): pieces follow one
// another from start to end, each aligned to its span, no span longer than asked, longer spans
// in the middle (a piece of a short span never holds a whole longer one); and the windows the
// console asks for read what they should.

import t from 'tap';
import { cover, DAY_MS, HOUR_MS, MINUTE_MS, SIX_HOURS_MS, SPANS } from '../../../src/store/sql/usage-spans.js';
import { rng } from '../../../src/tools/rng.js';

const T0 = Date.UTC(2025, 0, 10);

t.test('pieces tile the range in aligned spans, longest in the middle', async (t) => {
  const next = rng(5);
  let checked = 0;
  for (let i = 0; i < 3000; i++) {
    const spans = next() < 0.5 ? SPANS.stack : SPANS.token;
    const from = T0 + Math.floor(next() * 20 * 24 * 60) * MINUTE_MS;
    const to = from + Math.floor(next() ** 2 * 10 * 24 * 60) * MINUTE_MS;
    const maxSpan = [MINUTE_MS, HOUR_MS, SIX_HOURS_MS, DAY_MS, Infinity][Math.floor(next() * 5)]!;
    const pieces = cover(spans, from, to, maxSpan);
    const usable = spans.filter((s) => s.span <= maxSpan);
    let pos = from;
    let ok = true;
    for (const p of pieces) {
      const longer = usable.find((s) => s.span > p.span);
      ok &&= p.from === pos && p.to > p.from && p.from % p.span === 0 && p.to % p.span === 0 && p.span <= maxSpan;
      ok &&= spans.some((s) => s.span === p.span && s.table === p.table);
      // A shorter span only where no whole longer one fits.
      ok &&= longer === undefined || Math.ceil(p.from / longer.span) * longer.span + longer.span > p.to;
      pos = p.to;
    }
    ok &&= pos === to || (from === to && pieces.length === 0);
    if (!ok) {
      t.fail(`cover(${from}, ${to}, ${maxSpan}): ${JSON.stringify(pieces)}`);
      return;
    }
    checked++;
  }
  t.equal(checked, 3000, 'every random range');
});

t.test('the console’s ranges', async (t) => {
  const now = Date.UTC(2025, 0, 10, 12, 30, 15, 500);
  const end = Math.floor(now / MINUTE_MS) * MINUTE_MS + MINUTE_MS;
  const fromWeek = Math.floor(now / SIX_HOURS_MS) * SIX_HOURS_MS - 27 * SIX_HOURS_MS;
  const week = cover(SPANS.stack, fromWeek, end).map((p) => [p.table, (p.to - p.from) / p.span]);
  t.same(
    week,
    [
      ['stack_usage_6h', 1],
      ['stack_usage_day', 6],
      ['stack_usage_6h', 2],
      ['stack_usage_minute', 31],
    ],
    '7 d from 18:00: a 6-hour block to midnight, six days, two 6-hour blocks, then the minutes of the current hour (12:00 starts a block)',
  );
  const chart = cover(SPANS.stack, fromWeek, end, SIX_HOURS_MS).map((p) => [p.table, (p.to - p.from) / p.span]);
  t.same(chart, [
    ['stack_usage_6h', 27],
    ['stack_usage_minute', 31],
  ]);
  const hourAgo = Math.floor(now / MINUTE_MS) * MINUTE_MS - 59 * MINUTE_MS;
  t.same(
    cover(SPANS.token, hourAgo, end).map((p) => [p.table, (p.to - p.from) / p.span]),
    [
      ['usage_minute', 29],
      ['usage_minute', 31],
    ],
    '1 h: minutes on either side of the hour',
  );
  t.same(cover(SPANS.stack, end, end), [], 'an empty range reads nothing');
});
