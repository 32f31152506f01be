// Run by shapes.test.ts as `node --allow-natives-syntax`: drives the per-request classes down
// different paths and prints, as JSON, whether each instance ended with the same V8 map (hidden
// class) as the first of its kind. A field added late, or a field that changes representation
// (a small integer one time, a double or an object another), splits the map and makes the hot
// path's property accesses polymorphic.

import { resolveConfig } from '../../../src/config/load.js';
import { Exchange } from '../../../src/gateway/exchange.js';
import { MODE_DEFAULT, MODE_NODE } from '../../../src/gateway/headers.js';
import { HttpResponder } from '../../../src/gateway/http-responder.js';
import type { Serving } from '../../../src/gateway/serving.js';
import { WsResponder } from '../../../src/gateway/ws-responder.js';
import { F_OTHER, type AttemptSink } from '../../../src/upstream/transport.js';
import { eventually } from '../../helpers/eventually.js';
import { testServing, TOKEN } from '../../helpers/fake-gateway.js';
import { echoAnswer, FakeRouter } from '../../helpers/fake-upstream.js';
import { FakeResponse } from '../../helpers/fake-uws.js';

// Only parses with --allow-natives-syntax; built at run time so this file compiles as TypeScript.
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;

const CALL = '{"jsonrpc":"2.0","id":1,"method":"getSlot"}';
const BATCH = '[{"jsonrpc":"2.0","id":1,"method":"getSlot"},{"jsonrpc":"2.0","id":2,"method":"getBalance"},{"jsonrpc":"2.0","method":"getHealth"}]';

interface Seen {
  kind: string;
  path: string;
  obj: object;
}
const seen: Seen[] = [];
const see = (kind: string, path: string, obj: object): void => void seen.push({ kind, path, obj });

interface World {
  rt: Serving;
  router: FakeRouter;
}

function world(config: Record<string, unknown> = {}, nodes = 2, auto = true): World {
  const router = new FakeRouter(nodes);
  if (auto) for (const n of router.nodes) n.client.auto = echoAnswer;
  return { rt: testServing(router, { routing: { upstreamBatch: 1 }, ...config }), router };
}

/** An HTTP request as the listener makes it; the body streamed in `chunk`-byte pieces. */
function http(w: World, path: string, body: string, opts: { expected?: number; chunk?: number; mode?: number; abort?: boolean } = {}): FakeResponse {
  const res = new FakeResponse();
  const responder = new HttpResponder(res.asUws(), w.rt, '*', opts.expected ?? Buffer.byteLength(body), '');
  const ex = new Exchange(w.rt, TOKEN, responder, opts.mode ?? MODE_DEFAULT, '');
  responder.receive(ex);
  res.stream(body, opts.chunk ?? 1 << 20);
  if (opts.abort === true) res.aborted!();
  see('Exchange', `HTTP ${path}`, ex);
  see('HttpResponder', path, responder);
  return res;
}

function ws(w: World, conn: WsResponder, path: string, body: string): void {
  const ex = new Exchange(w.rt, TOKEN, conn, MODE_DEFAULT, '');
  ex.start(Buffer.from(body));
  see('Exchange', `WS ${path}`, ex);
}

function watchCalls(w: World, path: string): void {
  const route = w.router.route.bind(w.router);
  w.router.route = (call) => {
    if (call.attempts === 0) see('UpstreamCall', path, call);
    return route(call);
  };
}

function watchAttempts(w: World, path: string): void {
  for (const n of w.router.nodes) {
    const send = n.client.send.bind(n.client);
    n.client.send = (a: AttemptSink) => {
      see('Attempt', path, a);
      send(a);
    };
  }
}

async function main(): Promise<void> {
  const ok = world();
  watchCalls(ok, 'answered');
  watchAttempts(ok, 'answered');
  const answered: FakeResponse[] = [
    http(ok, 'single', CALL),
    http(ok, 'single, chunked body', CALL, { expected: -1, chunk: 5 }),
    http(ok, 'batch split', BATCH),
    http(ok, 'batch whole (node mode)', BATCH, { mode: MODE_NODE }),
    http(ok, 'notification', '{"jsonrpc":"2.0","method":"getSlot"}'),
    http(ok, 'parse error', '{'),
    http(ok, 'batch too large', '[' + Array(1001).fill(CALL).join(',') + ']', { expected: -1 }),
    http(ok, 'body too large', CALL, { expected: 4 }),
  ];
  const c1 = new WsResponder({ ip: '203.0.113.1', deliver: () => {} });
  const c2 = new WsResponder({ ip: '203.0.113.2', deliver: () => {} });
  see('WsResponder', 'connection 1', c1);
  see('WsResponder', 'connection 2', c2);
  ws(ok, c1, 'single', CALL);
  ws(ok, c2, 'batch', BATCH);

  const none = world({}, 0);
  watchCalls(none, 'no node');
  answered.push(http(none, 'no node', CALL), http(none, 'batch, no node', BATCH));
  const limited = world({ rateLimits: { token: { rate: 1, burst: 1 } } });
  answered.push(http(limited, 'first', CALL), http(limited, 'rate limited', CALL));

  const failing = world({}, 2, false);
  watchCalls(failing, 'retried, then failed');
  watchAttempts(failing, 'failed');
  const failed = http(failing, 'node failures', CALL);
  for (let i = 0; i < 2; i++) failing.router.nodes[i]!.client.open()[0]!.failed(F_OTHER, 'reset');
  answered.push(failed);

  const slow = world({ limits: { upstreamTimeoutMs: 5 } }, 1, false);
  watchCalls(slow, 'timed out');
  watchAttempts(slow, 'timed out');
  answered.push(http(slow, 'timeout', CALL));

  const gone = world({}, 1, false);
  http(gone, 'aborted mid-call', CALL, { abort: true });
  gone.router.nodes[0]!.client.open()[0]!.answered(200, Buffer.from('{"jsonrpc":"2.0","id":1,"result":1}'));

  // The request path's long-lived objects: every configuration generation's settings (a
  // reload swaps them) and every data plane's state, services and serving keep one map too.
  const worlds = [ok, none, limited, failing, slow, gone];
  for (const [i, w] of worlds.entries()) {
    see('Settings', `world ${i}`, w.rt.settings);
    see('RequestState', `world ${i}`, w.rt.state);
    see('Services', `world ${i}`, w.rt.services);
    see('Serving', `world ${i}`, w.rt);
  }
  ok.rt.reconfigure(
    resolveConfig({
      nodes: [{ id: 'n0', url: 'http://127.0.0.1:1' }],
      cors: { origins: ['https://a.example'] },
      limits: { methodTimeoutMs: { getBlock: 9000 } },
      rateLimits: { token: { rate: 5, burst: 5 } },
    }),
  );
  see('Settings', 'reloaded', ok.rt.settings);
  see('Serving', 'reloaded', ok.rt);
  answered.push(http(ok, 'after a reload', CALL));

  await eventually('every answer', () => answered.every((r) => r.ended !== null));
  for (const w of worlds) await eventually('in-flight back to 0', () => w.rt.state.inflight === 0);

  const first = new Map<string, Seen>();
  const checks: { kind: string; path: string; vs: string; same: boolean }[] = [];
  for (const s of seen) {
    const f = first.get(s.kind);
    if (f === undefined) first.set(s.kind, s);
    else checks.push({ kind: s.kind, path: s.path, vs: f.path, same: haveSameMap(f.obj, s.obj) });
  }
  // Guards the probe itself: objects of different classes never share a map.
  checks.push({ kind: 'probe', path: 'Exchange vs UpstreamCall', vs: '', same: !haveSameMap(first.get('Exchange')!.obj, first.get('UpstreamCall')!.obj) });
  process.stdout.write(JSON.stringify(checks) + '\n');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
