// The demo's transfer (docs/simulator.md "The demo transfer"): the banner's command sends a
// real transfer from the funded demo key through the gateway and shows it confirming and the
// balances moving; a restart keeps the key and funds it again. And `jumpgate sim --nodes`.

import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { runCli } from '../helpers/cli.js';
import { eventuallyValue } from '../helpers/eventually.js';
import { subscribe } from '../helpers/grpc.js';

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
