// The `geyser.Geyser` service as grpc-js serves it, with messages as bytes both ways (requests
// are decoded by the handlers, updates written as received), and how a call's API token is
// read. Shared by the listener and the simulated source.

import type * as grpc from '@grpc/grpc-js';
import type { TokenRecord, TokenTable } from '../gateway/token-table.js';

const identity = (b: Buffer): Buffer => b;

function method(name: string, stream: boolean): grpc.MethodDefinition<Buffer, Buffer> {
  return {
    path: `/geyser.Geyser/${name}`,
    requestStream: stream,
    responseStream: stream,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  };
}

export const GEYSER_SERVICE: grpc.ServiceDefinition = {
  Subscribe: method('Subscribe', true),
  Ping: method('Ping', false),
  GetLatestBlockhash: method('GetLatestBlockhash', false),
  GetBlockHeight: method('GetBlockHeight', false),
  GetSlot: method('GetSlot', false),
  IsBlockhashValid: method('IsBlockhashValid', false),
  GetVersion: method('GetVersion', false),
};

/** The API token of a call: `x-token` (the Yellowstone convention) or `x-service-api-token`. */
export function authenticate(tokens: TokenTable, md: grpc.Metadata): TokenRecord | null {
  for (const name of ['x-token', 'x-service-api-token']) {
    const v = md.get(name)[0];
    if (typeof v !== 'string' || v === '') continue;
    const record = tokens.find(v);
    return record !== null && record.active ? record : null;
  }
  return null;
}

export const UNAUTHENTICATED_DETAILS = 'a valid API token is required in the x-token metadata';
