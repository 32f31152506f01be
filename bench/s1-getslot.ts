// S1: single getSlot, closed loop, 50 connections: direct to a simulated node (the limit)
// against the same through jumpgate, alternating A/B/A/B in one run.

import { closedLoop, type LoadResult } from './load.js';
import { startGatewayProc, startSimProc } from './procs.js';

const TOKEN = 'bench-token-0123456789abcdef';
const BODY = '{"jsonrpc":"2.0","id":1,"method":"getSlot"}';

export interface S1Row extends LoadResult {
  target: string;
  round: number;
  cpuSecPer1k: number | null;
  rssMb: number | null;
}

export async function runS1(opts: { seconds: number; rounds: number }): Promise<S1Row[]> {
  const sims = await Promise.all([startSimProc('bench-a'), startSimProc('bench-b')]);
  const gw = await startGatewayProc(sims.map((s, i) => ({ id: `bench-${i}`, url: s.url })), TOKEN);
  const rows: S1Row[] = [];
  try {
    // Warm-up so JIT and keep-alive pools are settled before measuring.
    await closedLoop({ url: `${gw.url}/api-token/${TOKEN}`, body: BODY, connections: 50, seconds: 1 });
    for (let round = 1; round <= opts.rounds; round++) {
      const direct = await closedLoop({ url: sims[0]!.url, body: BODY, connections: 50, seconds: opts.seconds });
      rows.push({ ...direct, target: 'direct to node', round, cpuSecPer1k: null, rssMb: null });
      const cpu0 = gw.cpuSeconds();
      const via = await closedLoop({ url: `${gw.url}/api-token/${TOKEN}`, body: BODY, connections: 50, seconds: opts.seconds });
      const cpu = gw.cpuSeconds() - cpu0;
      rows.push({ ...via, target: 'jumpgate', round, cpuSecPer1k: via.requests > 0 ? (cpu / via.requests) * 1000 : null, rssMb: gw.rssBytes() / 2 ** 20 });
    }
  } finally {
    await gw.stop();
    await Promise.all(sims.map((s) => s.stop()));
  }
  return rows;
}

export function s1Table(rows: S1Row[]): string {
  const lines = ['| target | round | tool | req/s | p50 ms | p99 ms | errors | CPU s / 1k req | RSS MB |', '|---|---:|---|---:|---:|---:|---:|---:|---:|'];
  for (const r of rows) {
    lines.push(
      `| ${r.target} | ${r.round} | ${r.tool} | ${Math.round(r.rps)} | ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} | ${r.errors} | ${r.cpuSecPer1k === null ? '-' : r.cpuSecPer1k.toFixed(4)} | ${r.rssMb === null ? '-' : r.rssMb.toFixed(0)} |`,
    );
  }
  return lines.join('\n');
}
