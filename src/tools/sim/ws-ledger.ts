// PubSub subscriptions that follow the ledger: accountSubscribe (notified when the account
// changes, at the asked commitment), signatureSubscribe (once, then gone), logsSubscribe and
// programSubscribe, in Agave's notification shapes. Each tick walks the ledger's changes and
// landed transactions between the slot last seen and the node's slot now, per commitment.

import type { WsConn as WebSocket } from '../../server/types.js';
import { accountJson } from './encode.js';
import type { MethodEnv } from './env.js';
import type { AccountState, TxRecord } from './ledger.js';
import { Commitment, COMMITMENT_NAMES, invalidParams } from './params.js';
import { levelOf } from './tx-json.js';
import { pubkeyBytes } from './wire.js';

export type LedgerKind = 'account' | 'signature' | 'logs' | 'program';

interface Sub {
  kind: LedgerKind;
  ws: WebSocket<unknown>;
  commitment: Commitment;
  /** Account or program key; the signature; '' for logs "all". */
  key: string;
  encoding: string;
  /** logs: a mentioned key ('' = all). */
  mentions: string;
}

const ACCOUNT_ENCODINGS = ['binary', 'base58', 'base64', 'jsonParsed', 'base64+zstd'];
const EMPTY_ACCOUNT: AccountState = { lamports: 0n, owner: '11111111111111111111111111111111', executable: false, data: Buffer.alloc(0), rentEpoch: 0n };

function invalid(thing: string): string {
  return invalidParams('Invalid Request: Invalid ' + thing + ' provided');
}

/** A subscribe call's config: commitment (default finalized) and encoding; or an error. */
function config(c: unknown, encodingDefault: string): { commitment: Commitment; encoding: string } | string {
  if (c === undefined || c === null) return { commitment: Commitment.Finalized, encoding: encodingDefault };
  if (typeof c !== 'object' || Array.isArray(c)) return invalidParams('Invalid params');
  const { commitment, encoding } = c as { commitment?: unknown; encoding?: unknown };
  let level = Commitment.Finalized;
  if (commitment !== undefined && commitment !== null) {
    level = COMMITMENT_NAMES.indexOf(commitment as 'processed');
    if (level < 0) return invalidParams('Invalid params');
  }
  if (encoding !== undefined && encoding !== null && (typeof encoding !== 'string' || !ACCOUNT_ENCODINGS.includes(encoding)))
    return invalidParams('Invalid params');
  return { commitment: level, encoding: (encoding as string | undefined) ?? encodingDefault };
}

/** First index in a slot-ordered list with slot > `slot`. */
function after<T extends { slot: number }>(list: readonly T[], slot: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]!.slot <= slot) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class LedgerSubs {
  private readonly subs = new Map<number, Sub>();
  /** The node's slot per commitment at the last tick. */
  private readonly seen = [-1, -1, -1];

  get size(): number {
    return this.subs.size;
  }

  /** Parses a subscribe call; returns the Sub to add or an error fragment. */
  parse(method: string, p: unknown, ws: WebSocket<unknown>): Sub | string {
    if (!Array.isArray(p) || p.length < 1 || p.length > 2) return invalidParams('Invalid params');
    const first: unknown = p[0];
    if (method === 'logsSubscribe') {
      let mentions = '';
      if (typeof first === 'object' && first !== null && Array.isArray((first as { mentions?: unknown }).mentions)) {
        const m = (first as { mentions: unknown[] }).mentions;
        if (m.length !== 1) return invalidParams('Invalid Request: Only 1 address supported');
        if (typeof m[0] !== 'string' || pubkeyBytes(m[0]) === null) return invalid('mention');
        mentions = m[0];
      } else if (first !== 'all' && first !== 'allWithVotes') return invalidParams('Invalid params');
      const c = config(p[1], 'base64');
      return typeof c === 'string' ? c : { kind: 'logs', ws, commitment: c.commitment, key: '', encoding: '', mentions };
    }
    if (typeof first !== 'string') return invalidParams('Invalid params');
    if (method === 'signatureSubscribe') {
      if (!/^[1-9A-HJ-NP-Za-km-z]{64,88}$/.test(first)) return invalid('signature');
      const c = config(p[1], 'base64');
      return typeof c === 'string' ? c : { kind: 'signature', ws, commitment: c.commitment, key: first, encoding: '', mentions: '' };
    }
    const kind: LedgerKind = method === 'programSubscribe' ? 'program' : 'account';
    if (pubkeyBytes(first) === null) return invalid('pubkey');
    // Solana's PubSub default encoding is the legacy 'binary'.
    const c = config(p[1], 'binary');
    return typeof c === 'string' ? c : { kind, ws, commitment: c.commitment, key: first, encoding: c.encoding, mentions: '' };
  }

  add(id: number, sub: Sub): void {
    this.subs.set(id, sub);
  }

  remove(id: number): boolean {
    return this.subs.delete(id);
  }

  kindOf(id: number): LedgerKind | undefined {
    return this.subs.get(id)?.kind;
  }

  /** Starts counting from the node's slot now, so a subscription sees only what comes after. */
  start(env: MethodEnv): void {
    for (let c = 0; c < 3; c++) this.seen[c] = env.views[c]!;
  }

  /**
   * Sends what changed between the last tick and now; `send` writes one text to a socket;
   * `done` is called for each signature subscription that fired (Agave removes those).
   */
  tick(env: MethodEnv, send: (ws: WebSocket<unknown>, text: string) => void, done: (id: number, ws: WebSocket<unknown>) => void): void {
    const ledger = env.cluster.ledger;
    for (let c = 0; c < 3; c++) {
      const from = this.seen[c]!;
      const to = env.views[c]!;
      if (to <= from) continue;
      this.seen[c] = to;
      const changed = new Set<string>();
      for (let i = after(ledger.changes, from); i < ledger.changes.length && ledger.changes[i]!.slot <= to; i++) changed.add(ledger.changes[i]!.key);
      const landed: TxRecord[] = [];
      for (let i = after(ledger.landed, from); i < ledger.landed.length && ledger.landed[i]!.slot <= to; i++) landed.push(ledger.landed[i]!);
      for (const [id, s] of this.subs) {
        if (s.commitment !== c) continue;
        const ctx = '"context":{"slot":' + to + '}';
        if (s.kind === 'account' && changed.has(s.key)) {
          const state = ledger.accountAt(s.key, to) ?? EMPTY_ACCOUNT;
          const json = accountJson(state, s.encoding === 'jsonParsed' ? 'base64' : s.encoding, null);
          if (json !== null) send(s.ws, notification('accountNotification', '{' + ctx + ',"value":' + json + '}', id));
        } else if (s.kind === 'program') {
          for (const key of changed) {
            const state = ledger.accountAt(key, to);
            if (state === null || state === undefined || state.owner !== s.key) continue;
            const json = accountJson(state, s.encoding === 'jsonParsed' ? 'base64' : s.encoding, null);
            if (json !== null) send(s.ws, notification('programNotification', '{' + ctx + ',"value":{"pubkey":"' + key + '","account":' + json + '}}', id));
          }
        } else if (s.kind === 'logs') {
          for (const rec of landed) {
            if (s.mentions !== '' && !rec.tx.keys.includes(s.mentions)) continue;
            const value =
              '{"signature":"' + rec.signature + '","err":' + (rec.err === null ? 'null' : rec.err.json) + ',"logs":' + JSON.stringify(rec.logs) + '}';
            send(s.ws, notification('logsNotification', '{"context":{"slot":' + rec.slot + '},"value":' + value + '}', id));
          }
        }
      }
    }
    // Signatures: also those landed before the subscription, once the asked commitment has them.
    for (const [id, s] of this.subs) {
      if (s.kind !== 'signature') continue;
      const rec = ledger.record(s.key);
      if (rec === undefined) continue;
      const level = levelOf(rec.slot, env.views);
      if (level === null || COMMITMENT_NAMES.indexOf(level) < s.commitment) continue;
      const value = '{"err":' + (rec.err === null ? 'null' : rec.err.json) + '}';
      send(s.ws, notification('signatureNotification', '{"context":{"slot":' + env.views[s.commitment] + '},"value":' + value + '}', id));
      this.subs.delete(id);
      done(id, s.ws);
    }
  }
}

function notification(method: string, result: string, id: number): string {
  return '{"jsonrpc":"2.0","method":"' + method + '","params":{"result":' + result + ',"subscription":' + id + '}}';
}
