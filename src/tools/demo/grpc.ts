// The demo's Yellowstone gRPC endpoint: a fixed port, like its RPC, WebSocket, console and admin
// ports, so the client snippet the banner prints (and docs/grpc.md "The demo's endpoint" shows)
// works from one run to the next.

import net from 'node:net';

/** The port Yellowstone servers conventionally listen on. */
export const DEMO_GRPC_PORT = 10000;

/**
 * `port` when it can be listened on at `host`, else 0 (a free one): a busy gRPC port should not
 * stop the demo, whose RPC port is what the user came for (the banner says which port was taken).
 */
export function demoGrpcPort(host: string, port = DEMO_GRPC_PORT): Promise<number> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(0));
    probe.listen(port, host, () => probe.close(() => resolve(port)));
  });
}

/**
 * A shell command that streams slot statuses from `url` with the official client, run in the
 * repository (the package is a dev dependency). `fromPartial`: the request encoder walks every
 * filter map, so a plain object with only `slots` throws.
 */
export function grpcClientSnippet(url: string, token: string): string {
  return [
    `node --input-type=module -e "`,
    `import Client, { SubscribeRequest } from '@triton-one/yellowstone-grpc';`,
    `const client = new Client('${url}', '${token}', undefined);`,
    `await client.connect();`,
    `const stream = await client.subscribe();`,
    `stream.on('data', (u) => u.slot && console.log('slot', u.slot.slot, ['processed', 'confirmed', 'finalized'][u.slot.status] ?? u.slot.status));`,
    `stream.write(SubscribeRequest.fromPartial({ slots: { slots: {} } }));`,
    `"`,
  ].join('\n');
}
