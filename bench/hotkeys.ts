// The hot-key buckets under random keys: one million distinct 40-byte keys through the table
// that guards key affinity (default capacity), then a thousand keys taken again and again;
// per table, the time per take and the memory kept. BucketTable serves one thread;
// SharedBucketTable is what every thread shares (src/limits/shared-bucket-table.ts), so the
// difference between the rows is what sharing costs a single thread.

import { BucketTable } from '../src/limits/bucket-table.js';
import { SharedBucketTable } from '../src/limits/shared-bucket-table.js';

/** What the bench needs of a table. */
interface Table {
  take(key: string, n: number, now: number): number;
}

export interface HotkeysRow {
  table: string;
  /** Keys the table holds after the distinct keys (BucketTable: entries; shared: slots in use). */
  entriesKept: number;
  /** One take per distinct key: mostly misses that replace an entry. */
  nsPerTakeDistinct: number;
  /** Takes cycling over 1,000 keys (each take a new string), after the first round all hits. */
  nsPerTakeRepeat: number;
  heapMbGrowth: number;
  rssMbGrowth: number;
}

export interface HotkeysResult {
  keys: number;
  capacity: number;
  rows: HotkeysRow[];
}

const CHUNK = 10_000;
const HOT = 1000;

/**
 * A new, flat string per call, as a key read from a request is: a concatenation would leave a
 * rope, and reusing one string object would let the Map reuse the hash cached in it.
 */
function key(prefix: string, i: number): string {
  return Buffer.from(prefix + i.toString(36).padStart(39, 'x'), 'latin1').toString('latin1');
}

/** Takes once for each key `nth(i)`, i < takes; the keys are built a chunk at a time, outside the timing. */
function timeTakes(table: Table, takes: number, prefix: string, nth: (i: number) => number, n: number): number {
  const chunk: string[] = new Array<string>(CHUNK);
  let ns = 0;
  for (let from = 0; from < takes; from += CHUNK) {
    const to = Math.min(from + CHUNK, takes);
    for (let i = from; i < to; i++) chunk[i - from] = key(prefix, nth(i));
    const now = performance.now();
    for (let i = 0; i < to - from; i++) table.take(chunk[i]!, n, now);
    ns += (performance.now() - now) * 1e6;
  }
  return ns / takes;
}

function measure(name: string, make: () => Table, size: (t: Table) => number, keys: number): HotkeysRow {
  global.gc?.();
  const heap = process.memoryUsage().heapUsed;
  const rss = process.memoryUsage().rss;
  const table = make();
  const nsPerTakeDistinct = timeTakes(table, keys, 'k', (i) => i, 1);
  const nsPerTakeRepeat = timeTakes(table, keys, 'h', (i) => i % HOT, 0);
  global.gc?.();
  const mem = process.memoryUsage();
  return {
    table: name,
    entriesKept: size(table),
    nsPerTakeDistinct,
    nsPerTakeRepeat,
    heapMbGrowth: (mem.heapUsed - heap) / 2 ** 20,
    rssMbGrowth: (mem.rss - rss) / 2 ** 20,
  };
}

export function runHotkeys(keys = 1_000_000, capacity = 100_000): HotkeysResult {
  // The shared table first: its buffer is outside the heap, so the BucketTable run after it
  // cannot reuse its pages and look smaller than it is.
  const rows = [
    measure(
      'SharedBucketTable',
      () => SharedBucketTable.create(capacity, 100, 200),
      (t) => (t as SharedBucketTable).countKeys(),
      keys,
    ),
    measure(
      'BucketTable',
      () => new BucketTable(capacity, 100, 200),
      (t) => (t as BucketTable).size,
      keys,
    ),
  ];
  return { keys, capacity, rows };
}

export function hotkeysTable(r: HotkeysResult): string {
  return [
    `${r.keys} distinct keys, then ${r.keys} takes over ${HOT} keys; table capacity ${r.capacity} keys` +
      (global.gc ? '' : ' (run node with --expose-gc for steadier memory figures)'),
    '',
    '| table | entries kept | ns/take, distinct keys | ns/take, repeated keys | heap growth MB | RSS growth MB |',
    '|---|---:|---:|---:|---:|---:|',
    ...r.rows.map(
      (x) =>
        `| ${x.table} | ${x.entriesKept} | ${x.nsPerTakeDistinct.toFixed(0)} | ${x.nsPerTakeRepeat.toFixed(0)} | ${x.heapMbGrowth.toFixed(1)} | ${x.rssMbGrowth.toFixed(1)} |`,
    ),
  ].join('\n');
}
