// Memory of the hot-key buckets under random keys: one million distinct 40-byte keys through
// the table that guards key affinity (default capacity), heap before and after.

import { BucketTable } from '../src/routing/bucket-table.js';

export function runHotkeys(keys = 1_000_000, capacity = 100_000): { keys: number; capacity: number; heapMbBefore: number; heapMbAfter: number; tableSize: number; takesPerSec: number } {
  global.gc?.();
  const before = process.memoryUsage().heapUsed;
  const table = new BucketTable(capacity, 100, 200);
  const t0 = performance.now();
  for (let i = 0; i < keys; i++) table.take('k' + i.toString(36).padStart(39, 'x'), 1, performance.now());
  const secs = (performance.now() - t0) / 1000;
  global.gc?.();
  const after = process.memoryUsage().heapUsed;
  return { keys, capacity, heapMbBefore: before / 2 ** 20, heapMbAfter: after / 2 ** 20, tableSize: table.size, takesPerSec: keys / secs };
}

export function hotkeysTable(r: ReturnType<typeof runHotkeys>): string {
  return [
    '| distinct keys | table capacity | entries kept | heap before MB | heap after MB | takes/s |',
    '|---:|---:|---:|---:|---:|---:|',
    `| ${r.keys} | ${r.capacity} | ${r.tableSize} | ${r.heapMbBefore.toFixed(1)} | ${r.heapMbAfter.toFixed(1)} | ${Math.round(r.takesPerSec)} |`,
  ].join('\n');
}
