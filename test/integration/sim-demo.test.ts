// The demo's transfer (docs/simulator.md "The demo transfer"): the banner's command sends a
// real transfer from the funded demo key through the gateway and shows it confirming and the
// balances moving; a restart keeps the key and funds it again. The banner's gRPC client
// snippet runs as printed (docs/grpc.md "The demo's endpoint"), and a normal stop of the demo
// logs no warning. And `jumpgate sim --nodes`.

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { grpcClientSnippet } from '../../src/tools/demo/grpc.js';
import { runCli } from '../helpers/cli.js';
import { eventuallyValue } from '../helpers/eventually.js';
import { subscribe } from '../helpers/grpc.js';
import { openWs } from '../helpers/ws-client.js';

/** The repository root (where the snippet's client package resolves): this file runs from dist/test/integration/. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

t.test('demo: the printed transfer command lands a transfer through the gateway', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jg-demo-tx-'));
  const data = join(dir, 'data');
  const p = runCli(['start', '--port', '0', '--data', data], { cwd: dir });
  t.teardown(() => p.child.kill('SIGKILL'));
  const [, key] = await p.waitFor(/A real transfer from the demo key (\S+) \(100 SOL/);
  const [, args] = await p.waitFor(/npx jumpgate transfer (--url \S+ --key \S+)/);
  t.equal(JSON.parse(readFileSync(join(data, 'demo-wallet.json'), 'utf8')).length, 64, 'a Solana CLI keypair file');
  // The printed gRPC endpoint streams the cluster's slots to the official client with the demo token.
  const [, token] = await p.waitFor(/RPC endpoint: +\S+\/api-token\/(\S+)/);
  const [, grpcUrl] = await p.waitFor(/gRPC endpoint: +(http:\/\/\S+)/);
  const sub = await subscribe(grpcUrl!, token, { slots: { s: {} } });
  t.teardown(() => sub.close());
  await eventuallyValue('a slot update through the demo gRPC endpoint', () => (sub.updates.some((u) => u.slot !== undefined) ? true : undefined), 10_000);
  const run = runCli(['transfer', ...args!.split(' '), '--wait', 'confirmed', '--lamports', '2000000'], { cwd: dir });
  t.equal(await run.exited, 0, run.out());
  const out = run.out();
  t.match(out, new RegExp(`before \\(confirmed\\):\\n  from ${key}: 100\\.000000000 SOL`));
  t.match(out, /sent 0\.002000000 SOL: signature [1-9A-HJ-NP-Za-km-z]{86,88}/);
  t.match(out, /  (processed|confirmed) at slot \d+/);
  t.match(out, new RegExp(`after \\(confirmed\\):\\n  from ${key}: 99\\.997995000 SOL\\n  to   \\S+: 0\\.002000000 SOL`));

  // A restart keeps the key (and funds it again: the chain lives in memory).
  p.child.kill('SIGTERM');
  t.equal(await p.exited, 0);
  const p2 = runCli(['start', '--port', '0', '--data', data], { cwd: dir });
  t.teardown(() => p2.child.kill('SIGKILL'));
  const [, key2] = await p2.waitFor(/A real transfer from the demo key (\S+) \(100 SOL/);
  t.equal(key2, key, 'same demo key after a restart');
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  t.test(`demo: the gRPC snippet runs as printed; ${signal} stops it with no warning, each listener logged once`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'jg-demo-stop-'));
    const p = runCli(['start', '--port', '0', '--data', join(dir, 'data')], { cwd: dir });
    t.teardown(() => p.child.kill('SIGKILL'));
    const [, token] = await p.waitFor(/RPC endpoint: +\S+\/api-token\/(\S+)/);
    const [, grpcUrl, note] = await p.waitFor(/gRPC endpoint: +(http:\/\/127\.0\.0\.1:\d+) +\((.*)\)\n/);
    t.notMatch(note, /was taken/, '--port 0: a free port, not a fixed one that was busy');
    // The log line may come after the banner (the logger writes asynchronously).
    await p.waitFor(new RegExp(`"port":${new URL(grpcUrl!).port},"sources":\\["sim-fast","sim-slow"\\],"msg":"grpc listening"`));
    t.pass('the port the listener took');

    // The banner prints the snippet for this endpoint and token, indented; run as printed, it streams slots.
    const [, printed] = await p.waitFor(/official client.*\n((?: {2}.*\n)+?) {2}"\n/);
    const snippet = (printed + '  "').replace(/^ {2}/gm, '');
    t.equal(snippet, grpcClientSnippet(grpcUrl!, token!));
    const client = spawn('sh', ['-c', snippet], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    t.teardown(() => void client.kill('SIGKILL'));
    let clientOut = '';
    client.stdout.on('data', (d: Buffer) => (clientOut += d.toString()));
    client.stderr.on('data', (d: Buffer) => (clientOut += d.toString()));
    await eventuallyValue(
      () => `slots from the snippet, got: ${clientOut}`,
      () => (/^slot \d+ (processed|confirmed|finalized)$/m.test(clientOut) ? true : undefined),
      20_000,
    );

    // A WebSocket subscription open at the stop: the data plane holds a node socket too.
    const [, wsUrl] = await p.waitFor(/ ws (ws:\/\/127\.0\.0\.1:\d+\/api-token\/\S+\/)/);
    const c = await openWs(wsUrl!);
    t.teardown(() => c.close());
    c.send({ jsonrpc: '2.0', id: 1, method: 'slotSubscribe' });
    await c.collect((f) => f.method === 'slotNotification', 1, 10_000);

    // Every line the process wrote, the last ones included, once its stdout closes.
    const outClosed = new Promise((resolve) => p.child.stdout!.once('close', resolve));
    p.child.kill(signal);
    t.equal(await p.exited, 0, `${signal} exits 0`);
    await outClosed;
    const lines = p
      .out()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: number; msg: string; node?: string; to?: string });
    t.ok(
      lines.some((l) => l.msg === 'stopped'),
      'the stop was logged',
    );
    t.same(
      lines.filter((l) => l.level >= 40),
      [],
      'no line at warn or above',
    );
    for (const msg of ['rpc listening', 'grpc listening', 'admin listening', 'console listening']) {
      t.equal(lines.filter((l) => l.msg === msg).length, 1, `one "${msg}"`);
    }
    const lagging = lines.find((l) => l.msg === 'node state changed' && l.node === 'sim-lagging' && l.to === 'lagging');
    t.equal(lagging?.level, 30, 'sim-lagging falling behind, as designed: info');
  });
}

t.test('jumpgate sim --nodes 3: one cluster, every port printed', async (t) => {
  const p = runCli(['sim', '--port', '0', '--nodes', '3', '--lag', '0,2,5', '--slot-ms', '50', '--id', 'c', '--grpc-port', '0']);
  t.teardown(() => p.child.kill('SIGKILL'));
  await p.waitFor(/3 nodes of one cluster/);
  const urls = [...p.out().matchAll(/sim node c-\d listening on (http:\/\/\S+) \(lag (\d+)\)/g)].map((m) => ({ url: m[1]!, lag: Number(m[2]) }));
  t.same(
    urls.map((u) => u.lag),
    [0, 2, 5],
  );
  t.equal([...p.out().matchAll(/WebSocket: ws:\/\/\S+/g)].length, 3);
  t.equal([...p.out().matchAll(/gRPC \(Yellowstone\): http:\/\/\S+/g)].length, 3, 'a gRPC source per node');
  const call = async (url: string, method: string, params: unknown[]): Promise<any> =>
    ((await (await fetch(url, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) })).json()) as { result: any }).result;
  const key = 'GDtKeHiBv14HjDkTzmSYyPJ9kmx5D7KnqxTqJqHKZ2sm';
  await call(urls[0]!.url, 'requestAirdrop', [key, 5_000_000]);
  // Sent to the first node, seen by all three once their lag passes.
  for (const u of urls) {
    await eventuallyValue(
      `${u.url} to see the airdrop`,
      async () => ((await call(u.url, 'getBalance', [key, { commitment: 'processed' }])).value === 5_000_000 ? true : undefined),
      10_000,
    );
  }
  t.pass('all three nodes see it');
  const help = runCli(['sim', '--help']);
  t.equal(await help.exited, 0);
  t.match(help.out(), /--landing-ms V\s+delay before an accepted transaction lands \(0\)/);
  t.match(help.out(), /--finalize-depth V\s+slots finalized trails processed \(32\)/);
});
