// Landed transactions in Agave's JSON: a signature status, a getTransaction answer (json,
// base64 or base58), a getSignaturesForAddress entry, and decoding of sent transactions
// with Agave's -32602 messages.

import { decodeBase58, encodeBase58 } from '../../solana/base58.js';
import { blockTimeOf } from './chain.js';
import type { TxRecord } from './ledger.js';
import { invalidParams } from './params.js';
import type { ParsedTx } from './wire.js';

const TYPE = 'solana_transaction::versioned::VersionedTransaction';
const MAX_BASE58 = 1683;
const MAX_BASE64 = 1644;
const PACKET_DATA_SIZE = 1232;

/** Bytes of a sent transaction, or an error fragment. */
export function decodeTx(text: string, encoding: string): Buffer | string {
  let bytes: Buffer;
  if (encoding === 'base64') {
    if (text.length > MAX_BASE64)
      return invalidParams(`base64 encoded ${TYPE} too large: ${text.length} bytes (max: encoded/raw ${MAX_BASE64}/${PACKET_DATA_SIZE})`);
    const bad = /[^A-Za-z0-9+/=]/.exec(text);
    if (bad !== null) return invalidParams(`invalid base64 encoding: InvalidByte(${bad.index}, ${text.charCodeAt(bad.index)})`);
    bytes = Buffer.from(text, 'base64');
  } else {
    if (text.length > MAX_BASE58)
      return invalidParams(`base58 encoded ${TYPE} too large: ${text.length} bytes (max: encoded/raw ${MAX_BASE58}/${PACKET_DATA_SIZE})`);
    const b = decodeBase58(text);
    if (b === null) {
      const i = [...text].findIndex((c) => decodeBase58(c) === null);
      return invalidParams(`invalid base58 encoding: InvalidCharacter { character: '${text[i]}', index: ${i} }`);
    }
    bytes = Buffer.from(b);
  }
  if (bytes.length > PACKET_DATA_SIZE) return invalidParams(`decoded ${TYPE} too large: ${bytes.length} bytes (max: ${PACKET_DATA_SIZE} bytes)`);
  return bytes;
}

export type Level = 'processed' | 'confirmed' | 'finalized';

/** The commitment a node at these views gives a transaction landed at `slot`. */
export function levelOf(slot: number, views: readonly number[]): Level | null {
  if (slot > views[0]!) return null;
  if (slot <= views[2]!) return 'finalized';
  return slot <= views[1]! ? 'confirmed' : 'processed';
}

function errOf(rec: TxRecord): string {
  return rec.err === null ? 'null' : rec.err.json;
}

/** A getSignatureStatuses entry. */
export function statusJson(rec: TxRecord, level: Level, processed: number): string {
  const confirmations = level === 'finalized' ? 'null' : String(processed - rec.slot);
  const status = rec.err === null ? '{"Ok":null}' : '{"Err":' + rec.err.json + '}';
  return (
    '{"slot":' + rec.slot + ',"confirmations":' + confirmations + ',"status":' + status + ',"err":' + errOf(rec) + ',"confirmationStatus":"' + level + '"}'
  );
}

/** A getSignaturesForAddress entry. */
export function signatureInfoJson(rec: TxRecord, level: Level, slotMs: number): string {
  return (
    '{"signature":"' +
    rec.signature +
    '","slot":' +
    rec.slot +
    ',"err":' +
    errOf(rec) +
    ',"memo":null,"blockTime":' +
    blockTimeOf(rec.slot, slotMs) +
    ',"confirmationStatus":"' +
    level +
    '"}'
  );
}

export function messageJson(tx: ParsedTx): string {
  const ixs = tx.instructions.map(
    (ix) => '{"programIdIndex":' + ix.programIndex + ',"accounts":[' + ix.accounts.join(',') + '],"data":"' + encodeBase58(ix.data) + '","stackHeight":null}',
  );
  return (
    '{"accountKeys":' +
    JSON.stringify(tx.keys) +
    ',"header":{"numRequiredSignatures":' +
    tx.numRequiredSignatures +
    ',"numReadonlySignedAccounts":' +
    tx.numReadonlySigned +
    ',"numReadonlyUnsignedAccounts":' +
    tx.numReadonlyUnsigned +
    '}' +
    ',"recentBlockhash":"' +
    tx.blockhash +
    '","instructions":[' +
    ixs.join(',') +
    ']' +
    (tx.version === 'legacy' ? '' : ',"addressTableLookups":[]') +
    '}'
  );
}

export function metaJson(rec: TxRecord): string {
  const status = rec.err === null ? '{"Ok":null}' : '{"Err":' + rec.err.json + '}';
  return (
    '{"err":' +
    errOf(rec) +
    ',"status":' +
    status +
    ',"fee":' +
    rec.fee +
    ',"preBalances":[' +
    rec.preBalances.join(',') +
    '],"postBalances":[' +
    rec.postBalances.join(',') +
    '],"innerInstructions":[],"logMessages":' +
    JSON.stringify(rec.logs) +
    ',"preTokenBalances":[],"postTokenBalances":[],"rewards":[],' +
    '"loadedAddresses":{"writable":[],"readonly":[]},"computeUnitsConsumed":' +
    rec.units +
    '}'
  );
}

/** A getTransaction result (`withVersion`: maxSupportedTransactionVersion was given). */
export function transactionJson(rec: TxRecord, encoding: string, withVersion: boolean, slotMs: number): string {
  const tx = rec.tx;
  let body: string;
  if (encoding === 'base64') body = '["' + tx.bytes.toString('base64') + '","base64"]';
  else if (encoding === 'base58' || encoding === 'binary')
    body = encoding === 'binary' ? '"' + encodeBase58(tx.bytes) + '"' : '["' + encodeBase58(tx.bytes) + '","base58"]';
  else body = '{"signatures":' + JSON.stringify(tx.signatures) + ',"message":' + messageJson(tx) + '}';
  const version = withVersion ? ',"version":' + (tx.version === 'legacy' ? '"legacy"' : tx.version) : '';
  return '{"slot":' + rec.slot + ',"transaction":' + body + ',"meta":' + metaJson(rec) + version + ',"blockTime":' + blockTimeOf(rec.slot, slotMs) + '}';
}
