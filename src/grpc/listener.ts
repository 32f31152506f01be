// The gRPC listener (`grpc.port`): the Yellowstone `geyser.Geyser` service on @grpc/grpc-js,
// beside the uWS data plane (which speaks no HTTP/2), on the control plane's event loop with the
// token table the data plane gets. Messages travel as bytes: requests are decoded here,
// updates are written as received (./feed.ts). docs/grpc.md is the reference.

import * as grpc from '@grpc/grpc-js';
import type { Registry } from 'prom-client';
import type { TlsMaterial } from '../config/tls.js';
import type { TokenTable } from '../gateway/token-table.js';
import type { Logger } from '../log.js';
import type { UsageMeter } from '../usage/meter.js';
import { ClientStream, type SubscribeCall } from './client-stream.js';
import { compileFilters, FilterError, type GrpcLimits } from './filters.js';
import { FromSlotError, GrpcHub } from './hub.js';
import { GrpcMetrics } from './metrics.js';
import { decodeAs, encodeAs, geyserType, type SubscribeRequestObject } from './proto.js';
import type { SourceConfig } from './source.js';
import { authenticate, GEYSER_SERVICE, UNAUTHENTICATED_DETAILS } from './service.js';
import { unaryHandlers, type UnaryContext } from './unary.js';

export interface GrpcListenerOptions {
  host: string;
  port: number;
  sources: readonly SourceConfig[];
  limits: GrpcLimits;
  windowSlots: number;
  windowBytes: number;
  stallMs: number;
  tokens: TokenTable;
  usage: UsageMeter | null;
  /** The gateway's Prometheus registry; null registers nowhere (tests of parts). */
  registry: Registry | null;
  tls: TlsMaterial | null;
  log: Logger;
}

export interface GrpcListener {
  readonly port: number;
  readonly url: string;
  readonly hub: GrpcHub;
  /** Where usage is booked (the control plane's meter). */
  readonly usage: UsageMeter | null;
  close(): Promise<void>;
}

function subscribeHandler(hub: GrpcHub, o: GrpcListenerOptions, metrics: GrpcMetrics) {
  const requestType = geyserType('SubscribeRequest');
  const updateType = geyserType('SubscribeUpdate');
  return (call: SubscribeCall): void => {
    const token = authenticate(o.tokens, call.metadata);
    if (token === null) {
      metrics.closed.labels('UNAUTHENTICATED').inc();
      call.emit('error', { code: grpc.status.UNAUTHENTICATED, details: UNAUTHENTICATED_DETAILS });
      return;
    }
    const s = new ClientStream(call, token, o.limits.maxQueuedMessages, o.usage, metrics, hub);
    if (!hub.admit(s)) {
      s.closed = true;
      metrics.closed.labels('RESOURCE_EXHAUSTED').inc();
      call.emit('error', {
        code: grpc.status.RESOURCE_EXHAUSTED,
        details: `more than grpc.limits.maxStreamsPerToken (${o.limits.maxStreamsPerToken}) streams for this token`,
      });
      return;
    }
    // Headers at once, as tonic (Yellowstone's server) sends them: some clients wait for them
    // before they write their first request.
    call.sendMetadata(new grpc.Metadata());
    call.on('data', (bytes: Buffer) => {
      if (s.closed) return;
      o.usage?.record(token.id, 'grpc.Subscribe', 1, 0, bytes.length, 0);
      let req: SubscribeRequestObject;
      try {
        req = decodeAs<SubscribeRequestObject>(requestType, bytes);
      } catch (e) {
        s.end(grpc.status.INVALID_ARGUMENT, `malformed SubscribeRequest: ${(e as Error).message}`);
        return;
      }
      if (req.ping !== undefined) {
        // A ping (clients send one with empty filters to keep the stream alive) leaves the filters as they are.
        s.sendOwn(encodeAs(updateType, { filters: [], pong: { id: req.ping.id ?? 0 } }));
        return;
      }
      try {
        hub.place(s, compileFilters(req, o.limits), req.fromSlot);
      } catch (e) {
        if (e instanceof FilterError || e instanceof FromSlotError) s.end(grpc.status.INVALID_ARGUMENT, e.message);
        else {
          // A bug, not the client's doing: this stream ends, the listener stays up.
          o.log.error({ err: e }, 'grpc subscribe request failed');
          s.end(grpc.status.INTERNAL, 'internal error');
        }
      }
    });
    // The end of the client's requests ends the stream, as on Yellowstone: it is how the official
    // client closes a subscription.
    call.on('end', () => s.end(grpc.status.OK, 'OK'));
    call.on('cancelled', () => s.gone());
    call.on('close', () => s.gone());
    call.on('error', () => s.gone());
  };
}

export interface HubAndMetrics {
  hub: GrpcHub;
  metrics: GrpcMetrics;
}

/** The hub the listener's clients and the account cache's feed share (src/grpc/cache-feed.ts). */
export function createGrpcHub(o: Omit<GrpcListenerOptions, 'host' | 'port' | 'usage' | 'tls'>): HubAndMetrics {
  const metrics = new GrpcMetrics(o.registry);
  const hub = new GrpcHub(
    { sources: o.sources, limits: o.limits, windowSlots: o.windowSlots, windowBytes: o.windowBytes, stallMs: o.stallMs, metrics, log: o.log },
    o.tokens,
  );
  metrics.upstream = () => hub.upstreamStreams();
  return { hub, metrics };
}

/** `shared`: a hub made beforehand with createGrpcHub (the account cache's), else a new one. The listener's close closes it. */
export async function startGrpcListener(o: GrpcListenerOptions, shared?: HubAndMetrics): Promise<GrpcListener> {
  const { hub, metrics } = shared ?? createGrpcHub(o);
  const server = new grpc.Server({ 'grpc.max_receive_message_length': o.limits.maxRequestBytes });
  const ctx: UnaryContext = { hub, tokens: o.tokens, usage: o.usage, sources: o.sources };
  server.addService(GEYSER_SERVICE, { Subscribe: subscribeHandler(hub, o, metrics), ...unaryHandlers(ctx) });
  const creds =
    o.tls === null ? grpc.ServerCredentials.createInsecure() : grpc.ServerCredentials.createSsl(null, [{ cert_chain: o.tls.cert, private_key: o.tls.key }]);
  const host = o.host.includes(':') ? `[${o.host}]` : o.host;
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host}:${o.port}`, creds, (err, p) => (err === null ? resolve(p) : reject(err))),
  );
  return {
    port,
    url: `${o.tls === null ? 'http' : 'https'}://${host}:${port}`,
    hub,
    usage: o.usage,
    close: async () => {
      hub.close();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 1000);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
