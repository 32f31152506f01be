// The unary Geyser calls. Ping and GetVersion are answered here; the chain questions (GetSlot,
// GetBlockHeight, GetLatestBlockhash, IsBlockhashValid) go to every source at once as the
// client's bytes and the first successful answer's bytes come back unchanged (first arrival
// wins, as for updates). The request is decoded first so a malformed one is refused here.

import * as grpc from '@grpc/grpc-js';
import { createRequire } from 'node:module';
import type { TokenTable } from '../gateway/token-table.js';
import type { UsageMeter } from '../usage/meter.js';
import type { GrpcHub } from './hub.js';
import { authenticate, UNAUTHENTICATED_DETAILS } from './service.js';
import { decodeAs, encodeAs, geyserType } from './proto.js';
import { sourceMetadata, type SourceConfig } from './source.js';

export interface UnaryContext {
  hub: GrpcHub;
  tokens: TokenTable;
  usage: UsageMeter | null;
  sources: readonly SourceConfig[];
}

const SOURCE_TIMEOUT_MS = 5000;
const identity = (b: Buffer): Buffer => b;
const VERSION = (createRequire(import.meta.url)('../../../package.json') as { version: string }).version;

type Handler = grpc.handleUnaryCall<Buffer, Buffer>;
type Done = grpc.sendUnaryData<Buffer>;

function firstAnswer(ctx: UnaryContext, name: string, bytes: Buffer, done: Done): void {
  const clients = ctx.hub.upstream;
  if (clients.length === 0) {
    done({ code: grpc.status.UNAVAILABLE, details: 'no grpc.sources configured' });
    return;
  }
  let pending = clients.length;
  let answered = false;
  let lastError: grpc.ServiceError | null = null;
  clients.forEach((c, i) => {
    c.makeUnaryRequest(
      `/geyser.Geyser/${name}`,
      identity,
      identity,
      bytes,
      sourceMetadata(ctx.sources[i]!.xToken),
      { deadline: Date.now() + SOURCE_TIMEOUT_MS },
      (err, answer) => {
        pending--;
        if (answered) return;
        if (err === null && answer !== undefined) {
          answered = true;
          done(null, answer);
          return;
        }
        lastError = err;
        if (pending === 0)
          done({
            code: grpc.status.UNAVAILABLE,
            details: `no source answered ${name}${lastError === null ? '' : ` (last: ${grpc.status[lastError.code] ?? lastError.code})`}`,
          });
      },
    );
  });
}

function unary(ctx: UnaryContext, name: string, answer: (req: Buffer, done: Done) => void): Handler {
  const type = geyserType(`${name === 'Ping' ? 'PingRequest' : name + 'Request'}`);
  return (call, done) => {
    const token = authenticate(ctx.tokens, call.metadata);
    if (token === null) {
      done({ code: grpc.status.UNAUTHENTICATED, details: UNAUTHENTICATED_DETAILS });
      return;
    }
    try {
      decodeAs(type, call.request);
    } catch (e) {
      ctx.usage?.record(token.id, `grpc.${name}`, 1, 1, call.request.length, 0);
      done({ code: grpc.status.INVALID_ARGUMENT, details: `malformed ${type.name}: ${(e as Error).message}` });
      return;
    }
    answer(call.request, (err, value) => {
      ctx.usage?.record(token.id, `grpc.${name}`, 1, err === null ? 0 : 1, call.request.length, value?.length ?? 0);
      done(err, value);
    });
  };
}

export function unaryHandlers(ctx: UnaryContext): Record<string, Handler> {
  const pong = geyserType('PongResponse');
  const ping = geyserType('PingRequest');
  const version = encodeAs(geyserType('GetVersionResponse'), {
    version: JSON.stringify({ version: { package: 'jumpgate', version: VERSION }, extra: { service: 'geyser.Geyser gateway' } }),
  });
  const forward = (name: string): Handler => unary(ctx, name, (req, done) => firstAnswer(ctx, name, req, done));
  return {
    Ping: unary(ctx, 'Ping', (req, done) => done(null, encodeAs(pong, { count: decodeAs<{ count?: number }>(ping, req).count ?? 0 }))),
    GetVersion: unary(ctx, 'GetVersion', (_req, done) => done(null, version)),
    GetSlot: forward('GetSlot'),
    GetBlockHeight: forward('GetBlockHeight'),
    GetLatestBlockhash: forward('GetLatestBlockhash'),
    IsBlockhashValid: forward('IsBlockhashValid'),
  };
}
