// The Geyser message types, loaded once from the .proto files the project ships
// (src/grpc/proto/, found from this module whether it runs compiled or from source: tsc copies
// no non-TS file). Used for requests (low rate) and unary answers; updates on the hot path are
// read with ./wire.ts instead.

import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

const here = dirname(fileURLToPath(import.meta.url));

export function protoDir(): string {
  const candidates = [join(here, 'proto'), join(here, '..', '..', '..', 'src', 'grpc', 'proto')];
  for (const dir of candidates) if (existsSync(join(dir, 'geyser.proto'))) return dir;
  throw new Error(`geyser.proto not found; looked in ${candidates.join(', ')}`);
}

let root: protobuf.Root | null = null;

function load(): protobuf.Root {
  if (root === null) {
    const r = new protobuf.Root();
    r.loadSync(join(protoDir(), 'geyser.proto'), { keepCase: false });
    r.resolveAll();
    root = r;
  }
  return root;
}

export function geyserType(name: string): protobuf.Type {
  return load().lookupType('geyser.' + name);
}

/** Decoded messages as plain objects: 64-bit integers as numbers (slots stay below 2^53), enums as numbers. */
export const TO_OBJECT: protobuf.IConversionOptions = { longs: Number, enums: Number };

/** Decodes `bytes` as message `type` into a plain object; throws on malformed bytes. */
export function decodeAs<T>(type: protobuf.Type, bytes: Uint8Array): T {
  const msg = type.decode(bytes) as unknown as Record<string, Record<string, unknown> | undefined>;
  // A map entry whose message value equals the default has no value field (prost writes
  // `accounts: { name: {} }` so); protobufjs leaves null there, which means the empty message.
  for (const field of type.fieldsArray) {
    if (!field.map || !(field.resolvedType instanceof protobuf.Type)) continue;
    const map = msg[field.name];
    if (map === undefined) continue;
    for (const k of Object.keys(map)) if (map[k] === null) map[k] = field.resolvedType.create({});
  }
  return type.toObject(msg as unknown as protobuf.Message, TO_OBJECT) as T;
}

/** Encodes a plain object as message `type` (fields it does not know are an error, not dropped). */
export function encodeAs(type: protobuf.Type, value: Record<string, unknown>): Buffer {
  const err = type.verify(value);
  if (err !== null) throw new Error(`${type.name}: ${err}`);
  const out = type.encode(type.fromObject(value)).finish();
  return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
}

/** SubscribeRequest as decoded (camelCase, optional fields absent when unset). */
export interface SubscribeRequestObject {
  accounts?: Record<string, AccountFilterObject>;
  slots?: Record<string, { filterByCommitment?: boolean; interslotUpdates?: boolean }>;
  transactions?: Record<string, TransactionFilterObject>;
  transactionsStatus?: Record<string, unknown>;
  blocks?: Record<string, unknown>;
  blocksMeta?: Record<string, unknown>;
  entry?: Record<string, unknown>;
  commitment?: number;
  accountsDataSlice?: unknown[];
  ping?: { id?: number };
  fromSlot?: number;
}

export interface AccountFilterObject {
  account?: string[];
  owner?: string[];
  filters?: {
    memcmp?: { offset?: number; bytes?: Uint8Array; base58?: string; base64?: string };
    datasize?: number;
    tokenAccountState?: boolean;
    lamports?: { eq?: number; ne?: number; lt?: number; gt?: number };
  }[];
  nonemptyTxnSignature?: boolean;
  cuckooAccountsFilter?: unknown;
}

export interface TransactionFilterObject {
  vote?: boolean;
  failed?: boolean;
  signature?: string;
  accountInclude?: string[];
  accountExclude?: string[];
  accountRequired?: string[];
  cuckooAccountInclude?: unknown;
  tokenAccounts?: number;
}
