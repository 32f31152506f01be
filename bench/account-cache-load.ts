// The `cache` benchmark's load (./account-cache.ts): a bot's read mix over the hot and cold
// accounts, and an open-loop driver at a fixed rate over keep-alive connections that keeps
// every 10th answer for checking against the ledger.

import { Agent, request } from 'node:http';
import { rng } from '../src/tools/rng.js';
import type { Sample } from './account-cache-cluster.js';

/** Share of reads over the hot keys (a request's keys are all hot or all cold). */
export const HOT_SHARE = 0.8;
const SAMPLE_EVERY = 10;
const CONNECTIONS = 32;

export interface Spec {
  method: Sample['method'];
  keys: string[];
  body: string;
}

export function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

/** The read mix: getAccountInfo (base64) 40%, getBalance 40%, getMultipleAccounts of 10 keys 20%; processed and confirmed alike. */
export function mix(hot: string[], cold: string[], seed: number): () => Spec {
  const random = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  let id = 0;
  return () => {
    const pool = random() < HOT_SHARE ? hot : cold;
    const r = random();
    const method = r < 0.4 ? 'getAccountInfo' : r < 0.8 ? 'getBalance' : 'getMultipleAccounts';
    const keys = Array.from({ length: method === 'getMultipleAccounts' ? 10 : 1 }, () => pick(pool));
    const cfg: Record<string, string> = { commitment: pick(['processed', 'confirmed']) };
    if (method !== 'getBalance') cfg.encoding = 'base64';
    const body = JSON.stringify({ jsonrpc: '2.0', id: id++, method, params: [method === 'getMultipleAccounts' ? keys : keys[0], cfg] });
    return { method, keys, body };
  };
}

export function post(agent: Agent, url: URL, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(Buffer.concat(chunks).toString()));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

export interface Driven {
  latencies: number[];
  errors: number;
  samples: Sample[];
}

/** Open loop at `rate` for `seconds`: latency from each read's intended send time (no coordinated omission). */
export async function drive(url: string, next: () => Spec, rate: number, seconds: number): Promise<Driven> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const target = new URL(url);
  const out: Driven = { latencies: [], errors: 0, samples: [] };
  const inFlight = new Set<Promise<void>>();
  const t0 = performance.now();
  const total = Math.round(rate * seconds);
  let sent = 0;
  await new Promise<void>((done) => {
    const tick = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - t0) * rate) / 1000));
      for (; sent < due; sent++) {
        const intended = t0 + (sent * 1000) / rate;
        const spec = next();
        const sample = sent % SAMPLE_EVERY === 0;
        const p = post(agent, target, spec.body).then(
          (answer) => {
            out.latencies.push(performance.now() - intended);
            if (!answer.startsWith('{') || answer.includes('"error"')) out.errors++;
            if (sample) out.samples.push({ method: spec.method, keys: spec.keys, answer });
          },
          () => void out.errors++,
        );
        inFlight.add(p);
        void p.finally(() => inFlight.delete(p));
      }
      if (sent >= total) {
        clearInterval(tick);
        done();
      }
    }, 1);
  });
  await Promise.all(inFlight);
  agent.destroy();
  return out;
}
