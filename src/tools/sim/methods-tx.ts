// Transaction methods: sendTransaction (with Agave's preflight), simulateTransaction,
// requestAirdrop, getSignatureStatuses, getTransaction, getSignaturesForAddress,
// getFeeForMessage (docs/simulator.md "Transactions"); blocks and fees are in methods-block.ts.

import { BLOCKHASH_VALID_SLOTS, blockHeightOf, blockhashOf, signatureOf, slotOfBlockhash } from './chain.js';
import type { MethodEnv } from './env.js';
import { feeOf } from './fees.js';
import type { Simulation } from './ledger.js';
import { Commitment, INVALID_PARAMS, invalidParams, pubkeyError, readCfg, serverError, tooMany, TX_ENCODINGS, unhealthyError } from './params.js';
import { fieldlessError, type TxError } from './tx-errors.js';
import { decodeTx, levelOf, signatureInfoJson, statusJson, transactionJson } from './tx-json.js';
import { parseTx, pubkeyBytes, verifySignatures, type ParsedTx } from './wire.js';

type Handler = (params: unknown, env: MethodEnv) => string;

const MAX_STATUSES = 256;
const MAX_SIGNATURES_LIMIT = 1000;
/** Signatures older than this many slots are only found with searchTransactionHistory. */
const STATUS_CACHE_SLOTS = 300;
const SIG_VERIFY_FAILED = serverError(-32003, 'Transaction signature verification failure');
const BELOW_CONFIRMED = invalidParams('Method does not support commitment below `confirmed`');

function arg(p: unknown, i: number): unknown {
  return Array.isArray(p) ? p[i] : undefined;
}

function unsupportedEncoding(e: string): string {
  return invalidParams('unsupported encoding: ' + e + '. Supported encodings: base58, base64');
}

/** The transaction of params[0] in `encoding`, or an error fragment. */
function readTx(p: unknown, encoding: string | null): ParsedTx | string {
  const text = arg(p, 0);
  if (typeof text !== 'string') return INVALID_PARAMS;
  const enc = encoding ?? 'base58';
  if (enc !== 'base58' && enc !== 'base64') return unsupportedEncoding(enc);
  const bytes = decodeTx(text, enc);
  if (typeof bytes === 'string') return bytes;
  try {
    return parseTx(bytes);
  } catch (e) {
    return invalidParams((e as Error).message);
  }
}

/** A blockhash the node at `slot` knows and that has not expired. */
function blockhashKnown(hash: string, slot: number): boolean {
  const s = slotOfBlockhash(hash);
  return s >= 0 && s <= slot && slot - s <= BLOCKHASH_VALID_SLOTS;
}

function simulationJson(sim: Simulation, replacement: string): string {
  return (
    '{"accounts":null,"err":' +
    (sim.err === null ? 'null' : sim.err.json) +
    ',"innerInstructions":null,"loadedAccountsDataSize":0,"logs":' +
    JSON.stringify(sim.logs) +
    ',"replacementBlockhash":' +
    replacement +
    ',"returnData":null,"unitsConsumed":' +
    sim.units +
    '}'
  );
}

function preflightFailure(err: TxError, sim: Simulation | null): string {
  const s = sim ?? { err, logs: [], units: 0n };
  return serverError(-32002, 'Transaction simulation failed: ' + err.text, simulationJson({ ...s, err }, 'null'));
}

/** Agave's preflight at the node's slot for preflightCommitment; null when it passes. */
function preflight(tx: ParsedTx, slot: number, env: MethodEnv): string | null {
  if (!verifySignatures(tx)) return SIG_VERIFY_FAILED;
  const behind = env.behind();
  if (behind >= 0) return unhealthyError(behind);
  if (!blockhashKnown(tx.blockhash, slot)) return preflightFailure(fieldlessError('BlockhashNotFound'), null);
  const landed = env.cluster.ledger.record(tx.signatures[0]!);
  if (landed !== undefined && landed.slot <= slot) return preflightFailure(fieldlessError('AlreadyProcessed'), null);
  const sim = env.cluster.ledger.simulate(tx, true);
  // A copy landed after this node's slot is still new to it: the runtime's own memory says no.
  if (sim.err !== null && !(landed !== undefined && sim.err.json === '"AlreadyProcessed"')) return preflightFailure(sim.err, sim);
  return null;
}

const sendTransaction: Handler = (p, env) => {
  const cfg = readCfg(arg(p, 1), 'preflightCommitment', TX_ENCODINGS);
  if (cfg.error !== null) return cfg.error;
  const tx = readTx(p, cfg.encoding);
  if (typeof tx === 'string') {
    // Synthetic mode acknowledges any bytes, as the benchmark node always did.
    return env.knobs.synthetic && typeof arg(p, 0) === 'string' ? '"result":"' + signatureOf(arg(p, 0) as string) + '"' : tx;
  }
  if (cfg.raw?.skipPreflight !== true) {
    const slot = env.slotFor(cfg);
    if (typeof slot === 'string') return slot;
    const refused = preflight(tx, slot, env);
    if (refused !== null) return refused;
  }
  env.cluster.forward(tx, env.knobs.landingMs, env.knobs.txDropRate);
  return '"result":"' + tx.signatures[0] + '"';
};

const simulateTransaction: Handler = (p, env) => {
  const cfg = readCfg(arg(p, 1), 'commitment', TX_ENCODINGS);
  if (cfg.error !== null) return cfg.error;
  const parsed = readTx(p, cfg.encoding);
  if (typeof parsed === 'string') return parsed;
  const sigVerify = cfg.raw?.sigVerify === true;
  const replace = cfg.raw?.replaceRecentBlockhash === true;
  if (sigVerify && replace) return invalidParams('sigVerify may not be used with replaceRecentBlockhash');
  if (sigVerify && !verifySignatures(parsed)) return SIG_VERIFY_FAILED;
  const slot = env.slotFor(cfg);
  if (typeof slot === 'string') return slot;
  let tx = parsed;
  let replacement = 'null';
  if (replace) {
    const hash = blockhashOf(slot);
    const bytes = Buffer.from(tx.bytes);
    bytes.set(Buffer.from(pubkeyBytes(hash)!), tx.bytes.length - tx.message.length + tx.blockhashOffset);
    tx = parseTx(bytes);
    replacement = '{"blockhash":"' + hash + '","lastValidBlockHeight":' + (blockHeightOf(slot) + BLOCKHASH_VALID_SLOTS) + '}';
  } else if (!blockhashKnown(tx.blockhash, slot)) {
    const err = fieldlessError('BlockhashNotFound');
    return env.ctx[cfg.commitment] + simulationJson({ err, logs: [], units: 0n }, 'null') + '}';
  }
  return env.ctx[cfg.commitment] + simulationJson(env.cluster.ledger.simulate(tx, sigVerify), replacement) + '}';
};

const requestAirdrop: Handler = (p, env) => {
  const key = arg(p, 0);
  const bad = pubkeyError(key);
  if (bad !== null) return bad;
  const lamports = arg(p, 1);
  if (typeof lamports !== 'number' || !Number.isSafeInteger(lamports) || lamports < 0) return INVALID_PARAMS;
  const cfg = readCfg(arg(p, 2));
  if (cfg.error !== null) return cfg.error;
  const tx = env.cluster.ledger.airdropTx(pubkeyBytes(key as string)!, BigInt(lamports), blockhashOf(env.processed));
  env.cluster.forward(tx, env.knobs.landingMs, env.knobs.txDropRate);
  return '"result":"' + tx.signatures[0] + '"';
};

function signatureError(s: unknown): string | null {
  if (typeof s !== 'string') return INVALID_PARAMS;
  if (s.length > 88) return invalidParams('Invalid param: WrongSize');
  return /^[1-9A-HJ-NP-Za-km-z]{64,88}$/.test(s) ? null : invalidParams('Invalid param: Invalid');
}

const getSignatureStatuses: Handler = (p, env) => {
  const sigs = arg(p, 0);
  if (!Array.isArray(sigs)) return INVALID_PARAMS;
  if (sigs.length > MAX_STATUSES) return tooMany(MAX_STATUSES);
  for (const s of sigs) {
    const bad = signatureError(s);
    if (bad !== null) return bad;
  }
  const search = (arg(p, 1) as { searchTransactionHistory?: unknown } | undefined)?.searchTransactionHistory === true;
  const views = env.views;
  let out = env.ctx[Commitment.Processed] + '[';
  for (let i = 0; i < sigs.length; i++) {
    const rec = env.cluster.ledger.record(sigs[i] as string);
    const level = rec === undefined ? null : levelOf(rec.slot, views);
    const gone = rec !== undefined && !search && views[0]! - rec.slot > STATUS_CACHE_SLOTS;
    out += (i === 0 ? '' : ',') + (rec === undefined || level === null || gone ? 'null' : statusJson(rec, level, views[0]!));
  }
  return out + ']}';
};

const getTransaction: Handler = (p, env) => {
  const sig = arg(p, 0);
  const bad = signatureError(sig);
  if (bad !== null) return bad;
  // The second parameter may be a bare encoding string (the deprecated form).
  const c = arg(p, 1);
  const cfg = readCfg(typeof c === 'string' ? { encoding: c } : c, 'commitment', TX_ENCODINGS);
  if (cfg.error !== null) return cfg.error;
  if (cfg.commitment === Commitment.Processed) return BELOW_CONFIRMED;
  const slot = env.slotFor(cfg);
  if (typeof slot === 'string') return slot;
  const rec = env.cluster.ledger.record(sig as string);
  if (rec === undefined || rec.slot > slot || rec.slot < env.firstAvailable()) return '"result":null';
  const max = cfg.raw?.maxSupportedTransactionVersion;
  if (rec.tx.version !== 'legacy' && (typeof max !== 'number' || max < rec.tx.version)) {
    const v = rec.tx.version;
    return serverError(
      -32015,
      `Transaction version (${v}) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": ${v}`,
    );
  }
  return '"result":' + transactionJson(rec, cfg.encoding ?? 'json', max !== undefined, env.cluster.slotMs);
};

const getSignaturesForAddress: Handler = (p, env) => {
  const address = arg(p, 0);
  const bad = pubkeyError(address);
  if (bad !== null) return bad;
  const cfg = readCfg(arg(p, 1));
  if (cfg.error !== null) return cfg.error;
  if (cfg.commitment === Commitment.Processed) return BELOW_CONFIRMED;
  const limit = cfg.raw?.limit ?? MAX_SIGNATURES_LIMIT;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_SIGNATURES_LIMIT)
    return invalidParams('Invalid limit; max ' + MAX_SIGNATURES_LIMIT);
  const before = cfg.raw?.before;
  const until = cfg.raw?.until;
  for (const s of [before, until]) if (s !== undefined && s !== null && signatureError(s) !== null) return signatureError(s)!;
  const slot = env.slotFor(cfg);
  if (typeof slot === 'string') return slot;
  const list = env.cluster.ledger.signaturesFor(address as string);
  const items: string[] = [];
  let started = before === undefined || before === null;
  for (let i = list.length - 1; i >= 0 && items.length < limit; i--) {
    const rec = list[i]!;
    if (rec.signature === until) break;
    if (!started) {
      started = rec.signature === before;
      continue;
    }
    const level = rec.slot <= slot ? levelOf(rec.slot, env.views) : null;
    if (level !== null) items.push(signatureInfoJson(rec, level, env.cluster.slotMs));
  }
  return '"result":[' + items.join(',') + ']';
};

const getFeeForMessage: Handler = (p, env) => {
  const text = arg(p, 0);
  if (typeof text !== 'string') return INVALID_PARAMS;
  const cfg = readCfg(arg(p, 1));
  if (cfg.error !== null) return cfg.error;
  const slot = env.slotFor(cfg);
  if (typeof slot === 'string') return slot;
  const message = Buffer.from(text, 'base64');
  const required = message.length > 0 ? ((message[0]! & 0x80) !== 0 ? (message[1] ?? 0) : message[0]!) : 0;
  let tx: ParsedTx;
  try {
    tx = parseTx(Buffer.concat([Buffer.from([required]), Buffer.alloc(64 * required), message]));
  } catch {
    return invalidParams('invalid message: failed to deserialize');
  }
  return env.ctx[cfg.commitment] + (blockhashKnown(tx.blockhash, slot) ? String(feeOf(tx)) : 'null') + '}';
};

export const TX_METHODS: [string, Handler][] = [
  ['sendTransaction', sendTransaction],
  ['simulateTransaction', simulateTransaction],
  ['requestAirdrop', requestAirdrop],
  ['getSignatureStatuses', getSignatureStatuses],
  ['getTransaction', getTransaction],
  ['getSignaturesForAddress', getSignaturesForAddress],
  ['getFeeForMessage', getFeeForMessage],
];
