// Slow and stalled HTTP clients (docs/reliability.md "Reliability"): connections that send half a request
// head, or a head and part of a body, and then nothing, hold no one else up; every other
// client is answered as usual and the gateway's in-flight count returns to zero.

import { connect, type Socket } from 'node:net';
import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { startHarness, TOKEN } from '../helpers/gateway.js';

const STALLED = 200;

function openStalled(port: number, what: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => {
      s.write(what);
      resolve(s);
    });
    s.on('error', reject);
  });
}

t.test('slowloris: stalled heads and stalled bodies do not slow anyone else down', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const port = Number(new URL(h.url).port);
  const sockets: Socket[] = [];
  t.teardown(() => {
    for (const s of sockets) s.destroy();
  });
  const head = `POST /api-token/${TOKEN} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n`;
  const body = '{"jsonrpc":"2.0","id":1,"method":"getSlot"}';
  for (let i = 0; i < STALLED / 2; i++) {
    // Half a head: no blank line, uWS is still reading headers.
    sockets.push(await openStalled(port, head.slice(0, 20 + (i % 40))));
    // A whole head announcing a body that never finishes: the request is in flight.
    sockets.push(await openStalled(port, `${head}Content-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`));
  }
  await eventually(
    () => `the stalled bodies in flight (now ${h.gw.inflight()})`,
    () => h.gw.inflight() === STALLED / 2,
    5000,
  );

  const answers = await Promise.all(Array.from({ length: 50 }, () => h.call('getSlot')));
  t.ok(
    answers.every((a) => a.status === 200 && typeof a.json.result === 'number'),
    '50 ordinary calls answered while 200 connections stall',
  );

  for (const s of sockets) s.destroy();
  await eventually(
    () => `in-flight back to 0 (now ${h.gw.inflight()})`,
    () => h.gw.inflight() === 0,
    5000,
  );
  t.pass('closing the stalled connections releases their requests');
});
