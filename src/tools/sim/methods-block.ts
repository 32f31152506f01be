// Blocks: getBlock (full, accounts, signatures or none) and getRecentPrioritizationFees, over
// the same transactions: those landed in the slot and the fee market's synthetic ones
// (docs/simulator.md "Fee market").

import { encodeBase58 } from '../../solana/base58.js';
import { BLOCKHASH_VALID_SLOTS, blockHeightOf, blockhashOf, blockTimeOf } from './chain.js';
import type { MethodEnv } from './env.js';
import { syntheticTxs } from './fee-market.js';
import type { TxRecord } from './ledger.js';
import { Commitment, INVALID_PARAMS, invalidParams, pubkeyError, readCfg, serverError, tooMany, TX_ENCODINGS } from './params.js';
import { messageJson, metaJson } from './tx-json.js';
import { isWritable } from './wire.js';

type Handler = (params: unknown, env: MethodEnv) => string;

const MAX_FEE_ACCOUNTS = 128;
const DETAILS = ['full', 'accounts', 'signatures', 'none'];
const BELOW_CONFIRMED = invalidParams('Method does not support commitment below `confirmed`');

function arg(p: unknown, i: number): unknown {
  return Array.isArray(p) ? p[i] : undefined;
}

/** The transactions of produced slot `slot`: landed ones in landing order, then the synthetic ones. */
export function blockTxs(env: MethodEnv, slot: number): TxRecord[] {
  const landed = env.cluster.ledger.landed;
  let i = landed.length - 1;
  while (i >= 0 && landed[i]!.slot > slot) i--;
  let j = i;
  while (j >= 0 && landed[j]!.slot === slot) j--;
  return [...landed.slice(j + 1, i + 1), ...syntheticTxs(env.knobs.feeMarket, slot)];
}

function accountsJson(rec: TxRecord): string {
  const tx = rec.tx;
  const keys = tx.keys.map(
    (k, i) => '{"pubkey":"' + k + '","writable":' + isWritable(tx, i) + ',"signer":' + (i < tx.numRequiredSignatures) + ',"source":"transaction"}',
  );
  return '{"signatures":' + JSON.stringify(tx.signatures) + ',"accountKeys":[' + keys.join(',') + ']}';
}

function reducedMetaJson(rec: TxRecord, rewards: boolean): string {
  const status = rec.err === null ? '{"Ok":null}' : '{"Err":' + rec.err.json + '}';
  const err = rec.err === null ? 'null' : rec.err.json;
  return (
    '{"err":' +
    err +
    ',"status":' +
    status +
    ',"fee":' +
    rec.fee +
    ',"preBalances":[' +
    rec.preBalances.join(',') +
    '],"postBalances":[' +
    rec.postBalances.join(',') +
    '],"preTokenBalances":[],"postTokenBalances":[]' +
    (rewards ? ',"rewards":[]' : '') +
    '}'
  );
}

function txJson(rec: TxRecord, encoding: string, details: string, rewards: boolean, withVersion: boolean): string {
  const tx = rec.tx;
  let body: string;
  if (details === 'accounts') body = accountsJson(rec);
  else if (encoding === 'base64') body = '["' + tx.bytes.toString('base64') + '","base64"]';
  else if (encoding === 'base58') body = '["' + encodeBase58(tx.bytes) + '","base58"]';
  else body = '{"signatures":' + JSON.stringify(tx.signatures) + ',"message":' + messageJson(tx) + '}';
  const meta = details === 'accounts' ? reducedMetaJson(rec, rewards) : metaJson(rec);
  const version = withVersion ? ',"version":' + (tx.version === 'legacy' ? '"legacy"' : tx.version) : '';
  return '{"transaction":' + body + ',"meta":' + meta + version + '}';
}

const getBlock: Handler = (p, env) => {
  const slot = arg(p, 0);
  if (typeof slot !== 'number' || !Number.isInteger(slot) || slot < 0) return INVALID_PARAMS;
  // The second parameter may be a bare encoding string (the deprecated form).
  const c = arg(p, 1);
  const cfg = readCfg(typeof c === 'string' ? { encoding: c } : c, 'commitment', TX_ENCODINGS);
  if (cfg.error !== null) return cfg.error;
  if (cfg.commitment === Commitment.Processed) return BELOW_CONFIRMED;
  const details = cfg.raw?.transactionDetails ?? 'full';
  if (typeof details !== 'string' || !DETAILS.includes(details))
    return invalidParams('Invalid params: unknown variant `' + String(details) + '`, expected one of `full`, `accounts`, `signatures`, `none`.');
  const encoding = cfg.encoding ?? 'json';
  if (encoding === 'binary') return invalidParams('Invalid params: unknown variant `binary`, expected one of `json`, `jsonParsed`, `base58`, `base64`.');
  const skipped = env.cluster.skipped(slot);
  if (slot < env.firstAvailable()) {
    if (!env.knobs.longTermStorage)
      return serverError(-32001, 'Block ' + slot + ' cleaned up, does not exist on node. First available block: ' + env.firstAvailable());
    if (skipped) return serverError(-32009, 'Slot ' + slot + ' was skipped, or missing in long-term storage');
  } else {
    if (slot > env.views[cfg.commitment]!) return serverError(-32004, 'Block not available for slot ' + slot);
    if (skipped) return serverError(-32007, 'Slot ' + slot + ' was skipped, or missing due to ledger jump to recent snapshot');
  }
  const txs = blockTxs(env, slot);
  const max = cfg.raw?.maxSupportedTransactionVersion;
  if (typeof max !== 'number') {
    const v0 = txs.find((r) => r.tx.version !== 'legacy');
    if (v0 !== undefined && details !== 'signatures' && details !== 'none') {
      const v = v0.tx.version;
      return serverError(
        -32015,
        `Transaction version (${v}) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": ${v}`,
      );
    }
  }
  const rewards = cfg.raw?.rewards !== false;
  const parent = env.cluster.produced(slot - 1);
  let out = '"result":{"previousBlockhash":"' + blockhashOf(parent) + '","blockhash":"' + blockhashOf(slot) + '","parentSlot":' + parent;
  if (details === 'signatures') out += ',"signatures":' + JSON.stringify(txs.map((r) => r.signature));
  else if (details !== 'none') out += ',"transactions":[' + txs.map((r) => txJson(r, encoding, details, rewards, max !== undefined)).join(',') + ']';
  if (rewards) out += ',"rewards":[]';
  return out + ',"blockTime":' + blockTimeOf(slot, env.cluster.slotMs) + ',"blockHeight":' + blockHeightOf(slot) + '}';
};

/**
 * Agave's prioritization fee cache: per produced slot of the last 150 up to the node's processed
 * slot, the lowest compute-unit price among the block's transactions (0 without any), raised to
 * the lowest price among those that write-lock each given account, whichever is highest.
 */
const getRecentPrioritizationFees: Handler = (p, env) => {
  const keys = arg(p, 0);
  if (keys !== undefined && !Array.isArray(keys)) return INVALID_PARAMS;
  const wanted = (keys ?? []) as string[];
  if (wanted.length > MAX_FEE_ACCOUNTS) return tooMany(MAX_FEE_ACCOUNTS);
  for (const k of wanted) {
    const bad = pubkeyError(k);
    if (bad !== null) return bad;
  }
  const top = env.processed;
  const out: string[] = [];
  for (let s = top - BLOCKHASH_VALID_SLOTS + 1; s <= top; s++) {
    if (env.cluster.skipped(s)) continue;
    const txs = blockTxs(env, s);
    let fee = -1n;
    for (const r of txs) if (fee < 0n || r.unitPrice < fee) fee = r.unitPrice;
    if (fee < 0n) fee = 0n;
    for (const k of wanted) {
      let least = -1n;
      for (const r of txs) {
        const i = r.tx.keys.indexOf(k);
        if (i >= 0 && isWritable(r.tx, i) && (least < 0n || r.unitPrice < least)) least = r.unitPrice;
      }
      if (least > fee) fee = least;
    }
    out.push('{"slot":' + s + ',"prioritizationFee":' + fee + '}');
  }
  return '"result":[' + out.join(',') + ']';
};

export const BLOCK_METHODS: [string, Handler][] = [
  ['getBlock', getBlock],
  ['getRecentPrioritizationFees', getRecentPrioritizationFees],
];
