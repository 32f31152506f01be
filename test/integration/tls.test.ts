// TLS on every listener (docs/configuration.md "TLS"), with certificates made by openssl at test time: HTTPS
// JSON-RPC and WSS on the RPC port and the extra WS port (a plain client, @solana/web3.js and
// @solana/kit trusting the test CA), the console over HTTPS with a Secure session cookie, a
// reload that gives new connections a new certificate while open ones go on, config errors
// naming the field, and `jumpgate bench --insecure` over https:// and wss://.

import { spawn } from 'node:child_process';
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpsRequest, type RequestOptions } from 'node:https';
import { createServer } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { freePort } from '../../bench/procs.js';
import { runBenchCli } from '../../src/cli/bench.js';
import { loadConfig, resolveConfig } from '../../src/config/load.js';
import { startGateway, type Gateway } from '../../src/lifecycle/start-gateway.js';
import { silentLogger } from '../../src/log.js';
import type { HttpLoadResult } from '../../src/tools/loadgen/http-load.js';
import { connectWs } from '../../src/tools/loadgen/ws-client.js';
import type { WsLoadResult } from '../../src/tools/loadgen/ws-load.js';
import { startSim } from '../../src/tools/sim/node.js';
import { makeCerts, NO_OPENSSL } from '../helpers/certs.js';
import { runCli } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { startHarness, TOKEN } from '../helpers/gateway.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const GET_SLOT = '{"jsonrpc":"2.0","id":1,"method":"getSlot"}';
const SLOT_SUBSCRIBE = '{"jsonrpc":"2.0","id":1,"method":"slotSubscribe"}';
const ADMIN = 'admin-token-for-tls-tests-0123';
const PASSWORD = 'correct horse battery';

interface Answer {
  status: number;
  text: string;
  headers: Record<string, string | string[] | undefined>;
  /** The certificate the server showed on the connection that carried the request. */
  fingerprint: string;
  /** The request went over a kept-alive connection. */
  reused: boolean;
}

/** One HTTPS request (a POST when `body` is given); `ca` is trusted unless an agent brings its own. */
function request(
  url: string,
  opts: { body?: string; ca?: Buffer; agent?: Agent | false; headers?: Record<string, string>; client?: { cert: string; key: string } } = {},
): Promise<Answer> {
  const o: RequestOptions = {
    method: opts.body === undefined ? 'GET' : 'POST',
    agent: opts.agent ?? false,
    headers: { 'content-type': 'application/json', ...opts.headers },
  };
  if (opts.ca !== undefined) o.ca = opts.ca;
  if (opts.client !== undefined) {
    o.cert = readFileSync(opts.client.cert);
    o.key = readFileSync(opts.client.key);
  }
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, o, (res) => {
      const fingerprint = (res.socket as import('node:tls').TLSSocket).getPeerCertificate().fingerprint256;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers, fingerprint, reused: req.reusedSocket }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** Runs test/helpers/tls-clients.ts with the test CA in NODE_EXTRA_CA_CERTS. */
function solanaClients(ca: string, args: string[]): Promise<{ passed: number; failed: string[] }> {
  const script = new URL('../helpers/tls-clients.js', import.meta.url).pathname;
  const child = spawn(process.execPath, [script, ...args], { env: { ...process.env, NODE_EXTRA_CA_CERTS: ca }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('exit', () => {
      const line = out.trim().split('\n').pop() ?? '';
      try {
        resolve(JSON.parse(line) as { passed: number; failed: string[] });
      } catch {
        reject(new Error(`no result from the client process:\n${out}\n${err}`));
      }
    });
  });
}

t.test('HTTPS and WSS on the RPC and WebSocket ports; the console over HTTPS', { skip: NO_OPENSSL }, async (t) => {
  const certs = makeCerts(t.testdir({}));
  const wsPort = await freePort();
  const h = await startHarness({ sims: [{ slotMs: 50 }], console: true, config: { rpc: { port: 0, wsPort }, tls: { cert: certs.a.cert, key: certs.a.key } } });
  t.teardown(() => h.close());
  t.match(h.gw.url, /^https:\/\/127\.0\.0\.1:\d+$/, 'gw.url is https://');
  const rpcUrl = `${h.gw.url}/api-token/${TOKEN}`;

  await t.test('a JSON-RPC call over HTTPS, the CA trusted', async (t) => {
    const r = await request(rpcUrl, { body: GET_SLOT, ca: certs.caPem });
    t.equal(r.status, 200, 'answered');
    t.type(JSON.parse(r.text).result, 'number', r.text);
    t.equal(r.fingerprint, certs.a.fingerprint, 'the configured certificate');
    const onWsPort = await request(`https://127.0.0.1:${wsPort}/api-token/${TOKEN}`, { body: GET_SLOT, ca: certs.caPem });
    t.equal(onWsPort.status, 200, 'the extra WS port speaks TLS too');
    await t.rejects(request(rpcUrl, { body: GET_SLOT }), 'a client that does not trust the CA refuses the certificate');
    await t.rejects(fetch(`http://127.0.0.1:${h.gw.port}/api-token/${TOKEN}`, { method: 'POST', body: GET_SLOT }), 'no plain HTTP on the TLS port');
  });

  await t.test('@solana/web3.js and @solana/kit over https:// and wss://', async (t) => {
    const wss = `wss://127.0.0.1:${h.gw.port}/api-token/${TOKEN}/`;
    const web3Wss = `wss://127.0.0.1:${wsPort}/api-token/${TOKEN}/`;
    const r = await solanaClients(certs.ca, [rpcUrl, wss, web3Wss]);
    t.same(r.failed, [], 'every client check passed');
    t.ok(r.passed > 20, `${r.passed} client checks`);
    await eventually('the hub to hold no subscription', () => h.gw.ws().sharedSubscriptions === 0, 5000, 50);
  });

  await t.test('the console: HTTPS, https/wss endpoints, Secure session cookie', async (t) => {
    const base = h.gw.console!.url;
    t.match(base, /^https:\/\//);
    const home = await request(`${base}/`, { ca: certs.caPem });
    t.equal(home.status, 302, 'GET / answers (to the login page)');
    t.equal(home.fingerprint, certs.a.fingerprint);
    const login = await request(`${base}/login`, { ca: certs.caPem });
    t.equal(login.status, 200);
    const body = JSON.stringify({ email: 'tls@example.com', password: PASSWORD });
    const reg = await request(`${base}/api/v1/register`, { body, ca: certs.caPem });
    t.equal(reg.status, 201, 'registered');
    const cookie = [reg.headers['set-cookie'] ?? []].flat().join('\n');
    t.match(cookie, /jumpgate_session=[^;]+;.*\bSecure\b/i, `register: Secure cookie (${cookie})`);
    const again = await request(`${base}/api/v1/login`, { body, ca: certs.caPem });
    t.equal(again.status, 200, 'logged in');
    const session = [again.headers['set-cookie'] ?? []].flat().join('\n');
    t.match(session, /jumpgate_session=[^;]+;.*\bSecure\b/i, 'login: Secure cookie');
    const headers = { cookie: /jumpgate_session=[^;]+/.exec(session)![0], 'x-csrf-token': JSON.parse(again.text).csrfToken as string };
    const stack = await request(`${base}/api/v1/stacks`, { body: '{"name":"main"}', ca: certs.caPem, headers });
    t.equal(stack.status, 201, 'stack created');
    const overview = await request(`${base}/api/v1/stacks/${JSON.parse(stack.text).id as string}/overview`, { ca: certs.caPem, headers });
    t.same(
      JSON.parse(overview.text).endpoints,
      {
        http: `${h.gw.url}/api-token/<TOKEN>`,
        ws: `wss://127.0.0.1:${wsPort}/api-token/<TOKEN>/`,
        httpBase: h.gw.url,
        wsBase: `wss://127.0.0.1:${wsPort}`,
      },
      'the endpoints shown are https:// and wss://',
    );
  });
});

t.test('tls.ca: a client certificate that does not verify is refused; none, or a verified one, is let in', { skip: NO_OPENSSL }, async (t) => {
  const certs = makeCerts(t.testdir({}));
  const h = await startHarness({ console: true, config: { tls: { cert: certs.a.cert, key: certs.a.key, ca: certs.ca } } });
  t.teardown(() => h.close());
  for (const [what, url, body] of [
    ['RPC', `${h.gw.url}/api-token/${TOKEN}`, GET_SLOT],
    ['console', `${h.gw.console!.url}/login`, undefined],
  ] as const) {
    t.equal((await request(url, { body, ca: certs.caPem })).status, 200, `${what}: no client certificate`);
    t.equal((await request(url, { body, ca: certs.caPem, client: certs.client })).status, 200, `${what}: a certificate from tls.ca`);
    await t.rejects(request(url, { body, ca: certs.caPem, client: certs.stranger }), `${what}: a certificate tls.ca did not sign`);
  }
});

t.test('with TLS a taken port still fails the start: held by a TLS gateway, or by any listener', { skip: NO_OPENSSL }, async (t) => {
  const certs = makeCerts(t.testdir({}));
  const tls = { cert: certs.a.cert, key: certs.a.key };
  // A port given, not 0: the kernel never shares a port it picked itself.
  const h = await startHarness({ config: { tls, rpc: { port: await freePort(), wsPort: 0 } } });
  t.teardown(() => h.close());
  // Straight through startGateway: a harness that fails to start would leave its nodes running.
  const on = (port: number): Promise<Gateway> =>
    startGateway(
      resolveConfig(
        { rpc: { host: '127.0.0.1', port, wsPort: 0 }, admin: { port: 0 }, offload: { threads: 0 }, nodes: [{ id: 'n0', url: h.sims[0]!.url }], tls },
        {},
      ),
      { log: silentLogger(), store: null },
    );
  await t.rejects(on(h.gw.port), /cannot listen on 127\.0\.0\.1:\d+ \(address in use/, 'a second TLS gateway on the same port');
  const held = createServer();
  await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
  t.teardown(() => held.close());
  await t.rejects(on((held.address() as { port: number }).port), /cannot listen on 127\.0\.0\.1:\d+/, 'a port another server holds');
  t.equal((await request(`${h.gw.url}/api-token/${TOKEN}`, { body: GET_SLOT, ca: certs.caPem })).status, 200, 'the first gateway still serves');
});

/** A gateway started from a file, as `jumpgate start --config` runs it, with the admin API to reload it. */
async function fileGateway(t: Test, dir: string, tls: string): Promise<{ gw: Gateway; wsPort: number; reload(): Promise<{ status: number; json: any }> }> {
  const sim = await startSim({ id: 'n0', port: 0, slotMs: 50 });
  t.teardown(() => sim.close());
  const wsPort = await freePort();
  const file = join(dir, 'jumpgate.yaml');
  writeFileSync(
    file,
    [
      `rpc: { host: 127.0.0.1, port: 0, wsPort: ${wsPort} }`,
      'console: { port: 0 }',
      "store: { url: 'sqlite://:memory:' }",
      'offload: { threads: 0 }',
      'log: { level: silent }',
      `admin: { port: 0, token: ${ADMIN} }`,
      `nodes: [{ id: n0, url: "${sim.url}" }]`,
      `tokens: [{ token: ${TOKEN}, stack: t }]`,
      tls,
    ].join('\n') + '\n',
  );
  const gw = await startGateway(loadConfig(file), { log: silentLogger(), configPath: file, adminEphemeral: true, consoleEphemeral: true });
  t.teardown(() => gw.close());
  const reload = async (): Promise<{ status: number; json: any }> => {
    const res = await fetch(`${gw.admin!.url}/admin/reload`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` } });
    return { status: res.status, json: await res.json() };
  };
  return { gw, wsPort, reload };
}

t.test('reload: new connections get the new certificate; open ones keep working', { skip: NO_OPENSSL }, async (t) => {
  const dir = t.testdir({});
  const certs = makeCerts(dir);
  const cert = join(dir, 'server.crt');
  const key = join(dir, 'server.key');
  const serve = (c: { cert: string; key: string }): void => {
    copyFileSync(c.cert, cert);
    copyFileSync(c.key, key);
  };
  serve(certs.a);
  const { gw, wsPort, reload } = await fileGateway(t, dir, `tls: { cert: ${cert}, key: ${key} }`);
  const rpcUrl = `${gw.url}/api-token/${TOKEN}`;
  const consoleUrl = `${gw.console!.url}/login`;

  // Connections opened before the reload: keep-alive HTTPS to the RPC port and the console, and a WSS subscription.
  const rpcAgent = new Agent({ keepAlive: true, maxSockets: 1, ca: certs.caPem });
  const consoleAgent = new Agent({ keepAlive: true, maxSockets: 1, ca: certs.caPem });
  t.teardown(() => {
    rpcAgent.destroy();
    consoleAgent.destroy();
  });
  const first = await request(rpcUrl, { body: GET_SLOT, agent: rpcAgent });
  t.equal(first.fingerprint, certs.a.fingerprint, 'certificate a before the reload');
  t.equal((await request(consoleUrl, { agent: consoleAgent })).fingerprint, certs.a.fingerprint, 'the console too');
  let notifications = 0;
  let closed = false;
  const ws = await connectWs(
    new URL(`wss://127.0.0.1:${gw.port}/api-token/${TOKEN}/`),
    [],
    { message: () => notifications++, close: () => (closed = true) },
    5000,
    true,
  );
  t.teardown(() => ws.destroy());
  ws.send(SLOT_SUBSCRIBE);
  await eventually('slot notifications before the reload', () => notifications >= 3);

  serve(certs.b);
  const r = await reload();
  t.equal(r.status, 200, JSON.stringify(r.json));
  t.equal(r.json.changed, true);
  t.same(r.json.applied, ['tls.cert', 'tls.key'], 'the files whose contents changed');
  t.same(r.json.restartRequired, []);

  const kept = await request(rpcUrl, { body: GET_SLOT, agent: rpcAgent });
  t.ok(kept.reused, 'the keep-alive connection was reused');
  t.equal(kept.status, 200, 'and still answers');
  t.equal(kept.fingerprint, certs.a.fingerprint, 'with the certificate it was opened with');
  const keptConsole = await request(consoleUrl, { agent: consoleAgent });
  t.ok(keptConsole.reused && keptConsole.status === 200, 'the console keep-alive connection still answers');
  const seen = notifications;
  await eventually('notifications on the WebSocket opened before the reload', () => notifications >= seen + 3);
  t.equal(closed, false, 'the WebSocket stayed open');

  for (const [what, url, body] of [
    ['RPC port', rpcUrl, GET_SLOT],
    ['WS port', `https://127.0.0.1:${wsPort}/api-token/${TOKEN}`, GET_SLOT],
    ['console', consoleUrl, undefined],
  ] as const) {
    const fresh = await request(url, { body, ca: certs.caPem });
    t.equal(fresh.status, 200, `${what}: a new connection answers`);
    t.equal(fresh.fingerprint, certs.b.fingerprint, `${what}: a new connection gets certificate b`);
  }
  const after = await connectWs(
    new URL(`wss://127.0.0.1:${gw.port}/api-token/${TOKEN}/`),
    [],
    { message: () => undefined, close: () => undefined },
    5000,
    true,
  );
  after.close();

  const same = await reload();
  t.equal(same.status, 200);
  t.same([same.json.changed, same.json.applied], [false, []], 'unchanged files: nothing to do');

  copyFileSync(certs.a.key, key);
  const mismatch = await reload();
  t.equal(mismatch.status, 400);
  t.match(mismatch.json.error, /^config: tls\.key: .* does not match the certificate in tls\.cert/);
  rmSync(cert);
  const missing = await reload();
  t.equal(missing.status, 400);
  t.match(missing.json.error, `config: tls.cert: cannot read ${cert} (ENOENT)`);
  t.equal((await request(rpcUrl, { body: GET_SLOT, ca: certs.caPem })).fingerprint, certs.b.fingerprint, 'a refused reload changes nothing');
  ws.close();
});

t.test('turning TLS on or off needs a restart', { skip: NO_OPENSSL }, async (t) => {
  const dir = t.testdir({});
  const certs = makeCerts(dir);
  const { gw, reload } = await fileGateway(t, dir, '');
  const file = join(dir, 'jumpgate.yaml');
  writeFileSync(file, `${readFileSync(file, 'utf8')}tls: { cert: ${certs.a.cert}, key: ${certs.a.key} }\n`);
  const r = await reload();
  t.equal(r.status, 200);
  t.same(r.json.restartRequired, ['tls']);
  t.match(gw.url, /^http:\/\//, 'still plain HTTP');
  const plain = await fetch(`${gw.url}/api-token/${TOKEN}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: GET_SLOT });
  t.equal(plain.status, 200);
});

t.test('a certificate path that cannot be read fails the start, naming the field', { skip: NO_OPENSSL }, async (t) => {
  const dir = t.testdir({});
  const certs = makeCerts(dir);
  const missing = join(dir, 'nope.pem');
  const file = join(dir, 'jumpgate.yaml');
  writeFileSync(
    file,
    `nodes: [{ id: a, url: "http://127.0.0.1:1" }]\nrpc: { port: 0, wsPort: 0 }\nadmin: { port: 0 }\nconsole: { port: 0 }\ntls: { cert: ${missing}, key: ${certs.a.key} }\n`,
  );
  const p = runCli(['start', '--config', file]);
  t.equal(await p.exited, 2, 'exit 2: config error');
  t.match(p.out(), `config: tls.cert: cannot read ${missing} (ENOENT)`);
  writeFileSync(
    file,
    `nodes: [{ id: a, url: "http://127.0.0.1:1" }]\nrpc: { port: 0, wsPort: 0 }\nadmin: { port: 0 }\nconsole: { port: 0 }\ntls: { cert: ${certs.a.cert}, key: ${certs.b.key} }\n`,
  );
  const q = runCli(['start', '--config', file]);
  t.equal(await q.exited, 2);
  t.match(q.out(), /config: tls\.key: .*b\.key does not match the certificate in tls\.cert/);
});

t.test('jumpgate bench over https:// and wss:// with --insecure', { skip: NO_OPENSSL }, async (t) => {
  const certs = makeCerts(t.testdir({}));
  const h = await startHarness({ sims: [{ slotMs: 50 }], config: { tls: { cert: certs.a.cert, key: certs.a.key } } });
  t.teardown(() => h.close());
  const quick = ['--duration', '1s', '--warmup', '0', '--connections', '4', '--json', '--quiet'];

  const cli = runCli(['bench', '--url', h.gw.url, '--token', TOKEN, '--insecure', '--rate', '200', ...quick]);
  t.equal(await cli.exited, 0, 'exit 0');
  const open = JSON.parse(cli.out().trim().split('\n').pop()!) as HttpLoadResult;
  t.ok(open.ok > 100, `open loop: ${open.ok} answered`);
  t.equal(open.errors, 0);

  const run = async (argv: string[]): Promise<{ code: number; json: any }> => {
    const out: string[] = [];
    const code = await runBenchCli(argv, { out: (s) => out.push(s), err: { write: () => true, isTTY: false } });
    return { code, json: JSON.parse(out.join('')) };
  };
  const closed = await run(['--url', h.gw.url, '--token', TOKEN, '--insecure', '--closed', ...quick]);
  t.equal(closed.code, 0);
  t.ok((closed.json as HttpLoadResult).ok > 10, `closed loop: ${closed.json.ok} answered`);
  const untrusted = await run(['--url', h.gw.url, '--token', TOKEN, '--rate', '50', ...quick]);
  t.equal(untrusted.code, 1, 'without --insecure the self-signed chain is refused');
  t.match(Object.keys(untrusted.json.errorKinds).join(), /^socket /);

  const wss = `wss://127.0.0.1:${h.gw.port}`;
  const subs = await run(['--url', wss, '--token', TOKEN, '--insecure', '--ws-subscribers', '3', '--duration', '1s', '--json', '--quiet']);
  t.equal(subs.code, 0);
  t.equal((subs.json as WsLoadResult).subscribed, 3, 'WebSocket subscribers over wss://');
  t.ok((subs.json as WsLoadResult).notifications > 0, 'notifications arrived');
  const refused = await run(['--url', wss, '--token', TOKEN, '--ws-subscribers', '2', '--duration', '200ms', '--json', '--quiet']);
  t.equal(refused.code, 1);
  t.equal((refused.json as WsLoadResult).subscribed, 0, 'without --insecure: not subscribed');
});
