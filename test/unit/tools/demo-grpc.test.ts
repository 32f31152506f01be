// The demo's gRPC endpoint (docs/grpc.md "The demo's endpoint"): its fixed port, a free one when
// that is busy, and the client snippet the banner prints, which the page shows as is.

import { readFileSync } from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { DEMO_GRPC_PORT, demoGrpcPort, grpcClientSnippet } from '../../../src/tools/demo/grpc.js';

const DOCS = fileURLToPath(new URL('../../../../docs/grpc.md', import.meta.url));

/** A port this test holds until the returned close is called. */
async function hold(): Promise<{ port: number; close: () => Promise<void> }> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as net.AddressInfo).port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

t.test('the fixed port when it is free, a free one (0) when something holds it', async (t) => {
  const held = await hold();
  t.equal(await demoGrpcPort('127.0.0.1', held.port), 0, 'busy: 0, a free port');
  await held.close();
  t.equal(await demoGrpcPort('127.0.0.1', held.port), held.port, 'free: that port');
  t.equal(DEMO_GRPC_PORT, 10000);
});

t.test("docs/grpc.md shows the banner's snippet as the demo prints it", async (t) => {
  const docs = readFileSync(DOCS, 'utf8');
  t.ok(docs.includes(grpcClientSnippet(`http://127.0.0.1:${DEMO_GRPC_PORT}`, '<TOKEN>')), 'the snippet for the fixed port, with <TOKEN>');
});
