// Large bodies through the offload workers (docs/architecture.md "Settings and services", body
// memory): a body at or over workers.parseThresholdBytes is received into shared memory and
// parsed by a worker, a large batch answer merged there; the answers are the same as inline.

import t from 'tap';
import { startHarness, TOKEN } from '../helpers/gateway.js';

const THRESHOLD = 2048;

/** A batch of getSlot calls whose JSON text is exactly `bytes` long (padded with spaces). */
function batchOf(bytes: number): { text: string; count: number } {
  const calls: string[] = [];
  let text = '[]';
  for (let i = 0; text.length + 45 < bytes; i++) {
    calls.push(`{"jsonrpc":"2.0","id":${i},"method":"getSlot"}`);
    text = '[' + calls.join(',') + ']';
  }
  return { text: text + ' '.repeat(bytes - text.length), count: calls.length };
}

t.test('bodies at, over and under the parse threshold, sized and chunked, are answered in order', async (t) => {
  const h = await startHarness({
    sims: [{}, {}],
    config: { offload: { threads: 1, parseThresholdBytes: THRESHOLD, mergeThresholdBytes: THRESHOLD }, routing: { upstreamBatch: 7 } },
  });
  t.teardown(() => h.close());
  for (const size of [THRESHOLD - 1, THRESHOLD, 3 * THRESHOLD, 40_000]) {
    const { text, count } = batchOf(size);
    t.equal(Buffer.byteLength(text), size);
    for (const chunked of [false, true]) {
      const body = chunked
        ? new ReadableStream<Uint8Array>({
            start(c) {
              const b = Buffer.from(text);
              for (let o = 0; o < b.length; o += 1000) c.enqueue(b.subarray(o, o + 1000));
              c.close();
            },
          })
        : text;
      const r = await fetch(`${h.url}/api-token/${TOKEN}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        duplex: 'half',
      } as RequestInit);
      t.equal(r.status, 200, `${size} bytes${chunked ? ', chunked' : ''}`);
      const answers = (await r.json()) as { id: number; result: number }[];
      t.same(
        answers.map((a) => a.id),
        Array.from({ length: count }, (_, i) => i),
        `${count} answers in request order`,
      );
      t.ok(answers.every((a) => typeof a.result === 'number'));
    }
  }
});
