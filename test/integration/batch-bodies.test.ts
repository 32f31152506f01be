// Request bodies of 4-16 KB and node answers of 4-128 KB live in reused buffers (src/slabs.ts),
// handed back once their request is answered. A buffer reused while its bytes were still needed (an
// upstream write, a retry, an answer still being checked or written to the client) would send
// one request's calls with another's bytes, or answer a client with another batch's ids. Many different batches at once, through real nodes,
// over the pipelined client (which copies such bodies when it writes them) and undici (which
// does not, so its bodies are never reused): every answer must be exactly its own request's.

import t from 'tap';
import { startHarness } from '../helpers/gateway.js';
import { largeAccounts } from '../../bench/http-scenarios.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

/** A batch of `n` getBalance calls whose ids and params are all tagged with `tag`. */
function batch(tag: number, n: number): { body: string; ids: string[] } {
  const ids = Array.from({ length: n }, (_, i) => (i % 2 === 0 ? String(tag * 1000 + i) : `"t${tag}-${i}"`));
  const body = '[' + ids.map((id, i) => `{"jsonrpc":"2.0","id":${id},"method":"getBalance","params":["Tag${tag}x${i}"]}`).join(',') + ']';
  return { body, ids };
}

async function roundTrips(t: Test, client: 'pipelined' | 'undici', affinity: string): Promise<void> {
  const h = await startHarness({ sims: [{}, {}], config: { health: { intervalMs: 60_000 }, upstream: { client } } });
  t.teardown(() => h.close());
  let checked = 0;
  for (let wave = 0; wave < 4; wave++) {
    const sent = Array.from({ length: 40 }, (_, k) => batch(wave * 100 + k, 60 + ((k * 7) % 90)));
    const answers = await Promise.all(sent.map((b) => h.post(b.body, { headers: { 'x-service-affinity': affinity } })));
    answers.forEach((a, k) => {
      const want = sent[k]!;
      t.ok(want.body.length > 4096 && want.body.length <= 16384, 'a body in the reused range');
      const got = JSON.parse(a.text) as { id: unknown; result?: unknown }[];
      const ids = got.map((e) => JSON.stringify(e.id));
      if (a.status !== 200 || JSON.stringify(ids) !== JSON.stringify(want.ids) || got.some((e) => e.result === undefined)) {
        t.fail(`wave ${wave} batch ${k}: not its own answer`, { status: a.status, text: a.text.slice(0, 300) });
      } else checked++;
    });
  }
  t.equal(checked, 160, 'every batch answered with its own ids, in order');
}

t.test('reused body buffers never mix requests: pipelined client, batches whole', (t) => roundTrips(t, 'pipelined', 'node'));
t.test('reused body buffers never mix requests: pipelined client, batches split over nodes', (t) => roundTrips(t, 'pipelined', 'default'));
t.test('bodies undici carried are not reused, and nothing mixes', (t) => roundTrips(t, 'undici', 'node'));

t.test('large node answers (16-128 KB) in reused buffers never mix requests', async (t) => {
  const h = await startHarness({ sims: [{}, {}], config: { health: { intervalMs: 60_000 } } });
  t.teardown(() => h.close());
  const keys = largeAccounts();
  // Each request asks for a different rotation and count of the accounts: its own answer.
  const bodies = Array.from({ length: 60 }, (_, k) => {
    const n = 30 + ((k * 13) % 71);
    const mine = Array.from({ length: n }, (_, i) => keys[(k + i) % keys.length]!);
    return JSON.stringify({ jsonrpc: '2.0', id: k, method: 'getMultipleAccounts', params: [mine, { encoding: 'base64' }] });
  });
  const want = await Promise.all(
    bodies.map(async (body) => {
      const r = await fetch(h.sims[0]!.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      return JSON.stringify((JSON.parse(await r.text()) as { result: { value: unknown } }).result.value);
    }),
  );
  let checked = 0;
  for (let wave = 0; wave < 3; wave++) {
    const got = await Promise.all(bodies.map((b) => h.post(b)));
    got.forEach((a, k) => {
      const size = Buffer.byteLength(a.text);
      const parsed = JSON.parse(a.text) as { id: number; result?: { value: unknown } };
      if (a.status !== 200 || size <= 16384 || size > 131072 || parsed.id !== k || JSON.stringify(parsed.result?.value) !== want[k]) {
        t.fail(`wave ${wave} request ${k}: not its own answer (${size} bytes)`, { status: a.status, text: a.text.slice(0, 200) });
      } else checked++;
    });
  }
  t.equal(checked, 180, "every answer of 16-128 KB is its own request's");
});
