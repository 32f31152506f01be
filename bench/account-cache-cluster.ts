// The `cache` benchmark's cluster (./account-cache.ts), run as a child process over an IPC
// channel: one simulated cluster with one node and two cluster-fed Yellowstone gRPC sources,
// a writer landing transfers every slot, and the ledger the runner's sampled answers are
// checked against. One process, because only the process that holds the ledger can say what
// an account was at an answer's context slot; a child, so the node's CPU is measurable apart
// from the runner's load generation.

import { createHash } from 'node:crypto';
import { sign } from 'node:crypto';
import { blockhashOf } from '../src/tools/sim/chain.js';
import { Cluster } from '../src/tools/sim/cluster.js';
import { startSim } from '../src/tools/sim/node.js';
import { encodeBase58 } from '../src/solana/base58.js';
import { decodeBase58 } from '../src/solana/base58.js';
import { parseTx, type Signer } from '../src/tools/sim/wire.js';
import { startClusterGrpcSource } from '../src/tools/sim-grpc/cluster-source.js';

export interface ClusterReady {
  type: 'ready';
  node: string;
  sources: string[];
  hot: string[];
  cold: string[];
}

/** A sampled read and the answer it got, as the runner sends it for checking. */
export interface Sample {
  method: 'getAccountInfo' | 'getMultipleAccounts' | 'getBalance';
  keys: string[];
  answer: string;
}

export interface Checked {
  type: 'checked';
  checked: number;
  stale: number;
  /** The first few stale answers, for the log. */
  examples: string[];
}

/** Recipients per transaction: 20 transfers keep it under the 1,232-byte packet limit. */
const PER_TX = 20;
const SYSTEM = Buffer.alloc(32);

function keyOf(kind: string, i: number): Buffer {
  return createHash('sha256').update(`jumpgate-cache-bench-${kind}-${i}`).digest();
}

/** A signed legacy transaction of one system transfer to each of `to` (instruction 2 each). */
function transfersTx(from: Signer, to: Buffer[], lamports: bigint, blockhash: string): Buffer {
  const parts = [Buffer.from([1, 0, 1, to.length + 2]), from.pubkey, ...to, SYSTEM, Buffer.from(decodeBase58(blockhash)!), Buffer.from([to.length])];
  to.forEach((_, i) => {
    const data = Buffer.alloc(12);
    data.writeUInt32LE(2, 0);
    data.writeBigUInt64LE(lamports + BigInt(i), 4);
    parts.push(Buffer.from([to.length + 1, 2, 0, i + 1, 12]), data);
  });
  const message = Buffer.concat(parts);
  return Buffer.concat([Buffer.from([1]), sign(null, message, from.key), message]);
}

async function main(): Promise<void> {
  const [hotN, coldN, slotMs, coldEvery] = process.argv.slice(2).map(Number) as [number, number, number, number];
  const c = new Cluster({ slotMs });
  const node = await startSim({ id: 'cache-n0', port: 0, cluster: c });
  // Two sources on the node's view with independent jitter: the hub's first arrival wins.
  const sources = [
    await startClusterGrpcSource(node, { seed: 1, knobs: { jitterMs: 5 } }),
    await startClusterGrpcSource(node, { seed: 2, knobs: { jitterMs: 5 } }),
  ];
  const hot = Array.from({ length: hotN }, (_, i) => keyOf('hot', i));
  const cold = Array.from({ length: coldN }, (_, i) => keyOf('cold', i));
  // The faucet pays: it holds more than any run spends, and is never read.
  const payer = c.ledger.faucet;
  let amount = 1_000_000n; // above the rent-exempt minimum, so the first transfer creates the account
  const send = (to: Buffer[]): void => {
    for (let i = 0; i < to.length; i += PER_TX) {
      const wire = transfersTx(payer, to.slice(i, i + PER_TX), amount, blockhashOf(c.tip()));
      amount += BigInt(PER_TX); // every transaction distinct
      c.forward(parseTx(wire), 0, 0);
    }
  };
  send([...hot, ...cold]);
  // Every hot key each slot; the cold ones in turn, each once every `coldEvery` slots.
  const coldPerSlot = Math.ceil(coldN / coldEvery);
  let next = 0;
  let lastSlot = c.tip();
  const writer = setInterval(() => {
    const tip = c.tip();
    if (tip === lastSlot) return;
    lastSlot = tip;
    const turn: Buffer[] = [];
    for (let i = 0; i < coldPerSlot; i++) turn.push(cold[next++ % coldN]!);
    send([...hot, ...turn]);
  }, slotMs / 8);
  // The creating transfers landed and reached confirmed before the runner reads anything.
  await new Promise((r) => setTimeout(r, 3 * slotMs));

  const truth = (key: string, slot: number): { lamports: bigint; owner: string; data: Buffer } | null => {
    const s = c.ledger.knows(key) ? c.ledger.accountAt(key, slot)! : c.ledger.genesis(decodeBase58(key)!);
    return s === null || s.lamports === 0n ? null : s;
  };
  // What the integration test checks: each value equals the ledger at the answer's context slot.
  const check = (s: Sample): string => {
    const a = JSON.parse(s.answer) as { result?: { context: { slot: number }; value: unknown }; error?: unknown };
    if (a.result === undefined) return `error ${JSON.stringify(a.error)}`;
    const slot = a.result.context.slot;
    const values = s.method === 'getMultipleAccounts' ? (a.result.value as unknown[]) : [a.result.value];
    for (let i = 0; i < s.keys.length; i++) {
      const want = truth(s.keys[i]!, slot);
      const got = values[i] as null | number | { data: [string, string]; lamports: number; owner: string; space: number };
      if (s.method === 'getBalance') {
        if (BigInt(got as number) !== (want?.lamports ?? 0n)) return `${s.keys[i]} balance ${String(got)} at ${slot}, ledger ${want?.lamports ?? 0n}`;
      } else if (want === null || got === null || typeof got === 'number') {
        if (want !== got) return `${s.keys[i]} at ${slot}: ${JSON.stringify(got)}, ledger ${want === null ? 'null' : 'an account'}`;
      } else if (
        BigInt(got.lamports) !== want.lamports ||
        got.owner !== want.owner ||
        got.space !== want.data.length ||
        !Buffer.from(got.data[0], 'base64').equals(want.data)
      ) {
        return `${s.keys[i]} at ${slot}: lamports ${got.lamports}, ledger ${want.lamports}`;
      }
    }
    return '';
  };
  process.on('message', (m: { type: 'check'; samples: Sample[] } | { type: 'stop' }) => {
    if (m.type === 'stop') {
      clearInterval(writer);
      void Promise.all([...sources.map((s) => s.close()), node.close()]).then(() => process.exit(0));
      return;
    }
    const examples: string[] = [];
    let stale = 0;
    for (const s of m.samples) {
      const why = check(s);
      if (why === '') continue;
      stale++;
      if (examples.length < 5) examples.push(`${s.method}: ${why}`);
    }
    const reply: Checked = { type: 'checked', checked: m.samples.length, stale, examples };
    process.send!(reply);
  });
  // The runner gone: nothing left to serve.
  process.on('disconnect', () => process.exit(0));
  const ready: ClusterReady = { type: 'ready', node: node.url, sources: sources.map((s) => s.url), hot: hot.map(encodeBase58), cold: cold.map(encodeBase58) };
  process.send!(ready);
}

void main();
