// Solana method results as JSON fragments ('"result":…' or '"error":{…}') that the envelope
// splices between the jsonrpc head and the raw id. This file: the dispatch and the methods of
// the chain itself (slots, blockhashes, epochs, health); accounts and transactions have theirs.

import { decodeBase58 } from '../../solana/base58.js';
import { BLOCKHASH_VALID_SLOTS, blockHeightOf, blockTimeOf, GENESIS_HASH, SLOTS_PER_EPOCH, slotOfBlockhash } from './chain.js';
import { MethodEnv } from './env.js';
import { ACCOUNT_METHODS } from './methods-accounts.js';
import { BLOCK_METHODS } from './methods-block.js';
import { TOKEN_METHODS } from './methods-token.js';
import { TX_METHODS } from './methods-tx.js';
import { Commitment, INVALID_PARAMS, invalidParams, METHOD_NOT_FOUND, readCfg, serverError, unhealthyError } from './params.js';

export { MethodEnv } from './env.js';
export { INVALID_PARAMS, METHOD_NOT_FOUND, unhealthyError } from './params.js';

export type Handler = (params: unknown, env: MethodEnv) => string;

const VERSION = '"result":{"feature-set":3294202862,"solana-core":"2.1.0"}';
const HEALTH_OK = '"result":"ok"';
const EPOCH_SCHEDULE =
  '"result":{"firstNormalEpoch":0,"firstNormalSlot":0,"leaderScheduleSlotOffset":' +
  SLOTS_PER_EPOCH +
  ',"slotsPerEpoch":' +
  SLOTS_PER_EPOCH +
  ',"warmup":false}';
/** Rent-exempt minimum per byte, and the 128 bytes of account overhead, as on mainnet. */
const RENT_PER_BYTE = 6960;
const ACCOUNT_OVERHEAD = 128;

function arg(p: unknown, i: number): unknown {
  return Array.isArray(p) ? p[i] : undefined;
}

/** Methods whose only parameter is a config object: its slot, or an error fragment. */
function slotArg(p: unknown, env: MethodEnv, at = 0): number | string {
  const cfg = readCfg(arg(p, at));
  return cfg.error ?? env.slotFor(cfg);
}

function health(env: MethodEnv): string {
  if (env.knobs.unhealthy) return unhealthyError(env.knobs.lag > 0 ? env.knobs.lag : null);
  const behind = env.behind();
  return behind >= 0 ? unhealthyError(behind) : HEALTH_OK;
}

function blockTime(p: unknown, env: MethodEnv): string {
  const slot = arg(p, 0);
  if (typeof slot !== 'number' || !Number.isInteger(slot) || slot < 0) return INVALID_PARAMS;
  const skipped = env.cluster.skipped(slot);
  if (slot < env.firstAvailable()) {
    // Agave without long-term storage stops here; with it, the block comes from there.
    if (!env.knobs.longTermStorage)
      return serverError(-32001, 'Block ' + slot + ' cleaned up, does not exist on node. First available block: ' + env.firstAvailable());
    if (skipped) return serverError(-32009, 'Slot ' + slot + ' was skipped, or missing in long-term storage');
    return '"result":' + blockTimeOf(slot, env.cluster.slotMs);
  }
  if (slot > env.processed || (skipped && slot > env.views[Commitment.Finalized]!)) return serverError(-32004, 'Block not available for slot ' + slot);
  if (skipped) return serverError(-32007, 'Slot ' + slot + ' was skipped, or missing due to ledger jump to recent snapshot');
  return '"result":' + blockTimeOf(slot, env.cluster.slotMs);
}

function epochInfo(p: unknown, env: MethodEnv): string {
  const slot = slotArg(p, env);
  if (typeof slot === 'string') return slot;
  const landed = env.cluster.ledger.landed;
  let count = 0;
  for (let i = landed.length - 1; i >= 0 && count === 0; i--) if (landed[i]!.slot <= slot) count = i + 1;
  return (
    '"result":{"absoluteSlot":' +
    slot +
    ',"blockHeight":' +
    blockHeightOf(slot) +
    ',"epoch":' +
    Math.floor(slot / SLOTS_PER_EPOCH) +
    ',"slotIndex":' +
    (slot % SLOTS_PER_EPOCH) +
    ',"slotsInEpoch":' +
    SLOTS_PER_EPOCH +
    ',"transactionCount":' +
    count +
    '}'
  );
}

function blockhashValid(p: unknown, env: MethodEnv): string {
  const hash = arg(p, 0);
  if (typeof hash !== 'string') return INVALID_PARAMS;
  const cfg = readCfg(arg(p, 1));
  if (cfg.error !== null) return cfg.error;
  const at = env.slotFor(cfg);
  if (typeof at === 'string') return at;
  // Agave parses the hash first: not base58 is Invalid, not 32 bytes is WrongSize.
  if (hash.length > 44) return invalidParams('Invalid param: WrongSize');
  const bytes = decodeBase58(hash);
  if (bytes === null) return invalidParams('Invalid param: Invalid');
  if (bytes.length !== 32) return invalidParams('Invalid param: WrongSize');
  const s = slotOfBlockhash(hash);
  const valid = s >= 0 && s <= at && at - s <= BLOCKHASH_VALID_SLOTS;
  return '"result":{"context":{"apiVersion":"2.1.0","slot":' + at + '},"value":' + valid + '}';
}

function rentExempt(p: unknown): string {
  const n = arg(p, 0);
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) return INVALID_PARAMS;
  return '"result":' + (ACCOUNT_OVERHEAD + n) * RENT_PER_BYTE;
}

const handlers = new Map<string, Handler>([
  ['getHealth', (_p, env) => health(env)],
  [
    'getSlot',
    (p, env) => {
      if (p === undefined) return env.slotText[Commitment.Finalized]!;
      const s = slotArg(p, env);
      return typeof s === 'string' ? s : '"result":' + s;
    },
  ],
  [
    'getBlockHeight',
    (p, env) => {
      const s = slotArg(p, env);
      return typeof s === 'string' ? s : '"result":' + blockHeightOf(s);
    },
  ],
  ['getIdentity', (_p, env) => env.identity()],
  ['getVersion', () => VERSION],
  ['getGenesisHash', () => '"result":"' + GENESIS_HASH + '"'],
  ['getEpochSchedule', () => EPOCH_SCHEDULE],
  [
    'getLatestBlockhash',
    (p, env) => {
      const cfg = readCfg(arg(p, 0));
      if (cfg.error !== null) return cfg.error;
      const s = env.slotFor(cfg);
      return typeof s === 'string' ? s : env.latestBlockhash(cfg.commitment);
    },
  ],
  ['isBlockhashValid', blockhashValid],
  ['getEpochInfo', epochInfo],
  ['getBlockTime', blockTime],
  ['getFirstAvailableBlock', (_p, env) => '"result":' + env.firstAvailable()],
  ['minimumLedgerSlot', (_p, env) => '"result":' + env.firstAvailable()],
  ['getMinimumBalanceForRentExemption', rentExempt],
  ...ACCOUNT_METHODS,
  ...TX_METHODS,
  ...BLOCK_METHODS,
  ...TOKEN_METHODS,
]);

export const METHOD_NAMES: readonly string[] = [...handlers.keys()];

export function callMethod(method: string, params: unknown, env: MethodEnv): string {
  const h = handlers.get(method);
  return h === undefined ? METHOD_NOT_FOUND : h(params, env);
}
