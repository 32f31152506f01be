// Large answers pass through as they arrive (docs/routing.md "Large answers"): a 1 GB answer and
// ten concurrent 200 MB answers each grow the gateway's memory by less than 64 MB, byte for byte
// intact, with Content-Length kept or chunked as the node sent it; a client that stops reading
// holds the node's connection instead of growing memory; where an answer cannot stream (a
// batch's part) it is held up to limits.maxBufferedAnswerBytes and answered 7506 beyond.
// The node is a child process, so its memory is not counted.

import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { bigAnswerHead, fillerByte } from '../helpers/big-answer.js';
import { startHarness, TOKEN } from '../helpers/gateway.js';
import { eventually } from '../helpers/eventually.js';

const MB = 1024 * 1024;
const GROWTH_MAX = 64 * MB;
const NODE_SCRIPT = fileURLToPath(new URL('../helpers/big-answer-node.js', import.meta.url));

async function startBigNode(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [NODE_SCRIPT], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim()));
    child.once('exit', (code) => reject(new Error(`big-answer node exited ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, child };
}

// Gigabytes through one process (gateway and client): more than tap's default per file, on a busy machine.
t.setTimeout(600_000);
const node = await startBigNode();
t.teardown(() => void node.child.kill());
const h = await startHarness({
  sims: [],
  extraNodes: [{ id: 'big', url: node.url }],
  config: { limits: { maxBufferedAnswerBytes: 8 * MB, upstreamTimeoutMs: 60_000 } },
});
t.teardown(() => h.close());
const url = new URL(`/api-token/${TOKEN}`, h.url);

/** The highest RSS seen while `work` runs, over what it was before. */
async function rssGrowth<T>(work: () => Promise<T>): Promise<{ growth: number; result: T }> {
  global.gc?.();
  const before = process.memoryUsage().rss;
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { growth: peak - before, result };
  } finally {
    clearInterval(timer);
  }
}

interface Got {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  bytes: number;
  /** First byte that is not what the node wrote, -1 when every byte is. */
  wrongAt: number;
  head: string;
}

/** The filler's repeating pattern, long enough for any window of a read: compared natively, a byte at a time would be most of the test's time. */
const PATTERN = Buffer.from(Array.from({ length: 26 * 10_000 }, (_, i) => fillerByte(i)));

/** The position of the first byte of `chunk` (at offset `at` in the answer) that is not what the node wrote; -1 when none is. */
function firstWrong(chunk: Buffer, at: number, head: Buffer): number {
  let k = 0;
  for (; k < chunk.length && at + k < head.length; k++) if (chunk[k] !== head[at + k]) return at + k;
  while (k < chunk.length) {
    const i = at + k - head.length;
    const n = Math.min(chunk.length - k, PATTERN.length - 26);
    const want = PATTERN.subarray(i % 26, (i % 26) + n);
    const part = chunk.subarray(k, k + n);
    if (!part.equals(want)) {
      // The closing `"}` is checked by length: it is the answer's last two bytes.
      for (let j = 0; j < n; j++) if (part[j] !== want[j] && part[j] !== 0x22 && part[j] !== 0x7d) return at + k + j;
    }
    k += n;
  }
  return -1;
}

/** Posts `body` and reads the answer, checking a big answer's every byte without keeping it; `pauseAfter` bytes, then a pause. */
function call(body: string, id: string, pauseAfter = -1, pauseMs = 0): Promise<Got> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      const head = Buffer.from(bigAnswerHead(id));
      const got: Got = { status: res.statusCode!, headers: res.headers, bytes: 0, wrongAt: -1, head: '' };
      let paused = false;
      res.on('data', (chunk: Buffer) => {
        if (got.head.length < 200) got.head += chunk.subarray(0, 200).toString('latin1');
        if (got.wrongAt < 0) got.wrongAt = firstWrong(chunk, got.bytes, head);
        got.bytes += chunk.length;
        if (!paused && pauseAfter >= 0 && got.bytes >= pauseAfter) {
          paused = true;
          res.pause();
          setTimeout(() => res.resume(), pauseMs);
        }
      });
      res.on('end', () => resolve(got));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const gpa = (id: number, size: number, mode: 'length' | 'chunked'): string =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'getProgramAccounts', params: [size, mode] });

t.test('a 1 GB answer passes whole, with its Content-Length, growing memory by less than 64 MB', { timeout: 240_000 }, async (t) => {
  const size = 1024 * MB;
  // Connections, buffers and compiled code first: the measurement is what the answer costs.
  t.equal((await call(gpa(0, 20 * MB, 'length'), '0')).bytes, 20 * MB, 'a warm-up answer');
  const { growth, result: got } = await rssGrowth(() => call(gpa(1, size, 'length'), '1'));
  t.equal(got.status, 200);
  t.equal(got.headers['content-length'], String(size), "the node's length, passed on");
  t.equal(got.bytes, size, 'every byte');
  t.equal(got.wrongAt, -1, 'each byte as the node wrote it');
  t.equal(got.headers['x-service-node'], 'big');
  t.ok(growth < GROWTH_MAX, `RSS grew ${(growth / MB).toFixed(1)} MB`);
});

t.test('ten concurrent 200 MB answers (half of them chunked) grow memory by less than 64 MB together', { timeout: 240_000 }, async (t) => {
  const size = 200 * MB;
  const { growth, result } = await rssGrowth(() =>
    Promise.all(Array.from({ length: 10 }, (_, i) => call(gpa(i + 10, size, i % 2 === 0 ? 'length' : 'chunked'), String(i + 10)))),
  );
  result.forEach((got, i) => {
    t.equal(got.status, 200, `answer ${i}: 200`);
    t.equal(got.bytes, size, `answer ${i}: every byte`);
    t.equal(got.wrongAt, -1, `answer ${i}: as written`);
    if (i % 2 === 1) t.equal(got.headers['transfer-encoding'], 'chunked', `answer ${i}: chunked, as the node sent it`);
  });
  t.ok(growth < GROWTH_MAX, `RSS grew ${(growth / MB).toFixed(1)} MB`);
});

t.test('a client that stops reading holds the node back instead of growing memory', { timeout: 240_000 }, async (t) => {
  const size = 300 * MB;
  const { growth, result: got } = await rssGrowth(() => call(gpa(30, size, 'length'), '30', 4 * MB, 1500));
  t.equal(got.bytes, size);
  t.equal(got.wrongAt, -1);
  t.ok(growth < GROWTH_MAX, `RSS grew ${(growth / MB).toFixed(1)} MB with the reader paused 1.5 s`);
});

t.test('a client that leaves mid-answer: the node connection is dropped and the next call is served', async (t) => {
  await new Promise<void>((resolve) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let n = 0;
      res.on('data', (c: Buffer) => {
        n += c.length;
        if (n > 8 * MB) req.destroy();
      });
      res.on('error', () => undefined);
      res.on('close', () => resolve());
    });
    req.on('error', () => undefined);
    req.end(gpa(40, 500 * MB, 'length'));
  });
  await eventually('the gateway to let the request go', () => h.gw.inflight() === 0, 10_000);
  const got = await call(gpa(41, 2 * MB, 'chunked'), '41');
  t.equal(got.bytes, 2 * MB);
  t.equal(got.wrongAt, -1);
});

t.test('a batch part over limits.maxBufferedAnswerBytes: 7506 for it, nothing held beyond the limit', async (t) => {
  const body = JSON.stringify([
    { jsonrpc: '2.0', id: 1, method: 'getProgramAccounts', params: [20 * MB, 'length'] },
    { jsonrpc: '2.0', id: 2, method: 'getProgramAccounts', params: [1000, 'length'] },
  ]);
  const got = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
  t.match(got.text, /"code":7506/, 'the oversized part is answered 7506');
  t.match(got.text, /Node answer too large to buffer/);
});
