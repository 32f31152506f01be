// Where does the offload pool (piscina) start to pay? For batch bodies of growing size, compares
// analyze() inline against a round trip through piscina (body in SharedArrayBuffer memory,
// as the gateway receives large bodies), and the same for merging batch answers.
// Run: npm run bench -- parse

import { performance } from 'node:perf_hooks';
import { BodyMemory, MEM_SHARED } from '../src/gateway/body-memory.js';
import { Offload } from '../src/gateway/offload.js';
import { analyze } from '../src/rpc/analyze.js';
import { forwardable, type SubOutcome } from '../src/rpc/batch.js';

const SIZES = [4 << 10, 16 << 10, 64 << 10, 128 << 10, 256 << 10, 512 << 10, 1 << 20];

function batchOfSize(bytes: number): Buffer {
  const parts: string[] = [];
  let len = 2;
  for (let i = 0; len < bytes; i++) {
    const el = `{"jsonrpc":"2.0","id":${i},"method":"getAccountInfo","params":["${'A'.repeat(32)}${i}",{"encoding":"base64","commitment":"confirmed"}]}`;
    parts.push(el);
    len += el.length + 1;
  }
  return Buffer.from('[' + parts.join(',') + ']');
}

/** A node's answer for every element of `count`, ~`bytes` in total. */
function answersOfSize(count: number, bytes: number): Buffer {
  const per = Math.max(16, Math.floor(bytes / count) - 60);
  const data = 'Q'.repeat(per);
  const parts: string[] = [];
  for (let i = 0; i < count; i++) parts.push(`{"jsonrpc":"2.0","result":{"value":"${data}","rentEpoch":18446744073709551615},"id":${i}}`);
  return Buffer.from('[' + parts.join(',') + ']');
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function timeIt(n: number, fn: () => unknown): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    samples.push((performance.now() - t) * 1000);
  }
  return median(samples);
}

export interface ThresholdRow {
  bytes: number;
  parseInlineUs: number;
  parsePoolUs: number;
  /** Main-thread (event loop) time per call when offloaded: what other requests wait for. */
  parsePoolMainUs: number;
  mergeInlineUs: number;
  mergePoolUs: number;
  mergePoolMainUs: number;
}

/** Event-loop busy time per call while `n` offloaded calls run back to back. */
async function mainThreadUs(n: number, fn: () => Promise<unknown>): Promise<number> {
  const before = performance.eventLoopUtilization();
  for (let i = 0; i < n; i++) await fn();
  const d = performance.eventLoopUtilization(before);
  return (d.active * 1000) / n;
}

export async function measureThreshold(): Promise<{ rows: ThresholdRow[]; parseThreshold: number; mergeThreshold: number }> {
  const off = new Offload({ threads: 1, parseThresholdBytes: 0, mergeThresholdBytes: 0 });
  const rows: ThresholdRow[] = [];
  for (const size of SIZES) {
    const plain = batchOfSize(size);
    const shared = new BodyMemory(0).alloc(MEM_SHARED, plain.length);
    plain.copy(shared);
    const reps = size >= 256 << 10 ? 30 : 100;
    // Warm both paths (JIT, worker start).
    for (let i = 0; i < 5; i++) {
      analyze(plain, 100000);
      await off.analyze(shared, 100000);
    }
    const parseInlineUs = await timeIt(reps, () => analyze(plain, 100000));
    const parsePoolUs = await timeIt(reps, () => off.analyze(shared, 100000));
    const parsePoolMainUs = await mainThreadUs(reps, () => off.analyze(shared, 100000));
    const a = analyze(plain, 100000);
    const plan = a.plan!;
    const order = forwardable(plan);
    const outcomes: SubOutcome[] = [{ from: 0, to: order.length, response: answersOfSize(order.length, size), error: null, errorData: null }];
    for (let i = 0; i < 5; i++) {
      off.assembleInline(plain, plan, order, outcomes);
      await off.assemble(shared, plan, order, outcomes);
    }
    const mergeInlineUs = await timeIt(reps, () => off.assembleInline(plain, plan, order, outcomes));
    const mergePoolUs = await timeIt(reps, () => off.assemble(shared, plan, order, outcomes));
    const mergePoolMainUs = await mainThreadUs(reps, () => off.assemble(shared, plan, order, outcomes));
    rows.push({ bytes: size, parseInlineUs, parsePoolUs, parsePoolMainUs, mergeInlineUs, mergePoolUs, mergePoolMainUs });
  }
  await off.close();
  // The threshold is the first size from which offloading costs the event loop at most half
  // the inline work (other requests are served meanwhile) and the round trip takes at most
  // twice the inline time (the request itself is not slowed much).
  const first = (pick: (r: ThresholdRow) => boolean): number => {
    for (let i = 0; i < rows.length; i++) if (rows.slice(i).every(pick)) return rows[i]!.bytes;
    return Infinity;
  };
  return {
    rows,
    parseThreshold: first((r) => r.parsePoolMainUs * 2 <= r.parseInlineUs && r.parsePoolUs <= 2 * r.parseInlineUs),
    mergeThreshold: first((r) => r.mergePoolMainUs * 2 <= r.mergeInlineUs && r.mergePoolUs <= 2 * r.mergeInlineUs),
  };
}

export function thresholdTable(r: Awaited<ReturnType<typeof measureThreshold>>): string {
  const lines = [
    '| body | parse inline µs | parse via pool µs (main thread) | merge inline µs | merge via pool µs (main thread) |',
    '|---:|---:|---:|---:|---:|',
  ];
  const f = (n: number): string => n.toFixed(0);
  for (const row of r.rows) {
    lines.push(
      `| ${row.bytes >> 10} KiB | ${f(row.parseInlineUs)} | ${f(row.parsePoolUs)} (${f(row.parsePoolMainUs)}) | ${f(row.mergeInlineUs)} | ${f(row.mergePoolUs)} (${f(row.mergePoolMainUs)}) |`,
    );
  }
  const kib = (n: number): string => (Number.isFinite(n) ? `${n >> 10} KiB` : 'never (within 1 MiB)');
  lines.push('', `pool pays for parsing from ${kib(r.parseThreshold)}, for merging from ${kib(r.mergeThreshold)}`);
  return lines.join('\n');
}
