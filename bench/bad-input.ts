// Bad input at volume: malformed JSON, 2 MiB bodies, 50-byte affinity keys, wrong content
// type, conflicting tokens. Each must get its documented error while the gateway's memory
// stays bounded. Reports RSS before, after each wave, and the error codes seen.

import { request } from 'node:http';
import { startGatewayProc, startSimProc } from './procs.js';

const TOKEN = 'bench-token-0123456789abcdef';

interface Case {
  name: string;
  body: Buffer | string;
  headers: Record<string, string>;
}

function send(url: string, c: Case): Promise<{ status: number; code: number | null }> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'POST', headers: c.headers, agent: false }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => {
        let code: number | null = null;
        try {
          code = (JSON.parse(text) as { error?: { code?: number } }).error?.code ?? null;
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, code });
      });
    });
    // The gateway may answer 413 and close before the whole body is written.
    req.on('error', () => resolve({ status: -1, code: null }));
    req.end(c.body);
  });
}

export interface BadInputRow {
  name: string;
  requests: number;
  statuses: Record<string, number>;
  rssMbAfter: number;
}

export async function runBadInput(perCase: number): Promise<{ rssMbBefore: number; rows: BadInputRow[] }> {
  const sim = await startSimProc('bad-a');
  const gw = await startGatewayProc([{ id: 'a', url: sim.url }], TOKEN);
  const json = { 'content-type': 'application/json' };
  const url = `${gw.url}/api-token/${TOKEN}`;
  const cases: Case[] = [
    { name: 'malformed JSON', body: '{"jsonrpc":"2.0","id":1,"method":', headers: json },
    { name: '2 MiB body', body: Buffer.alloc(2 << 20, 0x20), headers: json },
    {
      name: '50-byte affinity key',
      body: '{"jsonrpc":"2.0","id":1,"method":"getSlot"}',
      headers: { ...json, 'x-service-affinity': 'key', 'x-service-affinity-key': 'k'.repeat(50) },
    },
    { name: 'wrong content type', body: '{"jsonrpc":"2.0","id":1,"method":"getSlot"}', headers: { 'content-type': 'text/plain' } },
    {
      name: 'two different tokens',
      body: '{"jsonrpc":"2.0","id":1,"method":"getSlot"}',
      headers: { ...json, 'x-service-api-token': 'another-token-0123456789' },
    },
  ];
  try {
    await new Promise((r) => setTimeout(r, 500));
    const rssMbBefore = gw.rssBytes() / 2 ** 20;
    const rows: BadInputRow[] = [];
    for (const c of cases) {
      const statuses: Record<string, number> = {};
      for (let done = 0; done < perCase;) {
        const wave = Math.min(20, perCase - done);
        const results = await Promise.all(Array.from({ length: wave }, () => send(url, c)));
        for (const r of results) {
          const k = `${r.status}/${r.code ?? '-'}`;
          statuses[k] = (statuses[k] ?? 0) + 1;
        }
        done += wave;
      }
      rows.push({ name: c.name, requests: perCase, statuses, rssMbAfter: gw.rssBytes() / 2 ** 20 });
    }
    const alive = await send(url, { name: 'good', body: '{"jsonrpc":"2.0","id":1,"method":"getSlot"}', headers: json });
    if (alive.status !== 200) throw new Error(`gateway stopped answering good requests (${alive.status})`);
    return { rssMbBefore, rows };
  } finally {
    await gw.stop();
    await sim.stop();
  }
}

export function badInputTable(r: Awaited<ReturnType<typeof runBadInput>>): string {
  const lines = [`RSS before: ${r.rssMbBefore.toFixed(0)} MB`, '', '| input | requests | HTTP status / code seen | RSS after (MB) |', '|---|---:|---|---:|'];
  for (const row of r.rows) {
    const seen = Object.entries(row.statuses)
      .map(([k, v]) => `${k} ×${v}`)
      .join(', ');
    lines.push(`| ${row.name} | ${row.requests} | ${seen} | ${row.rssMbAfter.toFixed(0)} |`);
  }
  return lines.join('\n');
}
