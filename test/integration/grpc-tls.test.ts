// The gRPC listener with the top-level `tls` (docs/grpc.md "Configuration"): a client that
// trusts the CA subscribes and calls; a plain-text client is refused.

import * as grpc from '@grpc/grpc-js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { encodeAs, geyserType, decodeAs } from '../../src/grpc/proto.js';
import { makeCerts, NO_OPENSSL } from '../helpers/certs.js';
import { eventually } from '../helpers/eventually.js';
import { startGrpcHarness, TOKEN } from '../helpers/grpc.js';

const id = (b: Buffer): Buffer => b;

function metadata(): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set('x-token', TOKEN);
  return md;
}

function version(client: grpc.Client): Promise<string> {
  return new Promise((resolve, reject) =>
    client.makeUnaryRequest('/geyser.Geyser/GetVersion', id, id, Buffer.alloc(0), metadata(), { deadline: Date.now() + 3000 }, (err, answer) =>
      err === null && answer !== undefined
        ? resolve(decodeAs<{ version: string }>(geyserType('GetVersionResponse'), answer).version)
        : reject(err ?? new Error('no answer')),
    ),
  );
}

t.test('TLS: served with the configured certificate', { skip: NO_OPENSSL }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jumpgate-grpc-tls-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const certs = makeCerts(dir);
  const h = await startGrpcHarness({ config: { tls: { cert: certs.a.cert, key: certs.a.key } } });
  t.teardown(() => h.close());
  t.match(h.url, /^https:\/\//);
  // By name: @grpc/grpc-js 1.14 sends an IP address as the TLS server name, which Node 26
  // refuses (docs/grpc.md "Configuration"); the certificate names localhost too.
  const target = h.url.replace('https://127.0.0.1', 'localhost');
  const client = new grpc.Client(target, grpc.credentials.createSsl(certs.caPem));
  t.teardown(() => client.close());
  t.match(JSON.parse(await version(client)), { version: { package: 'jumpgate' } });
  const call = client.makeBidiStreamRequest('/geyser.Geyser/Subscribe', id, id, metadata());
  let n = 0;
  call.on('data', () => n++);
  call.on('error', () => {});
  call.write(encodeAs(geyserType('SubscribeRequest'), { slots: { s: {} } }));
  await eventually('slot updates over TLS', () => n >= 3);
  call.cancel();
  const plain = new grpc.Client(target, grpc.credentials.createInsecure());
  t.teardown(() => plain.close());
  await t.rejects(version(plain), 'a plain-text client gets nothing');
});
