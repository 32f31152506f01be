// A simulated Jito block engine on its own port (docs/simulator.md "Block engine"), over a
// simulated cluster: POST /api/v1/bundles answers sendBundle, getBundleStatuses,
// getInflightBundleStatuses and getTipAccounts; POST /api/v1/transactions answers
// sendTransaction. A bundle is checked when it comes (at most 5 transactions, each decodes and
// is signed, one of them write-locks a tip account), then lands whole or not at all after
// `bundleLandingMs`, with probability `bundleLandRate`: every transaction must run without error
// against the ledger then, or none lands. Beyond `engineRateLimit` calls a second the engine
// answers 429 as Jito's does.

import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeBase58 } from '../../solana/base58.js';
import { BLOCKHASH_VALID_SLOTS, slotOfBlockhash } from './chain.js';
import type { Cluster } from './cluster.js';
import { DEFAULT_KNOBS } from './knobs.js';
import { isWritable, parseTx, verifySignatures, type ParsedTx } from './wire.js';

/** Jito's mainnet tip accounts: a bundle must write-lock one of them. */
export const TIP_ACCOUNTS: readonly string[] = [
  '96gYZGLnJYVFmbjzopPSU6QiEV5fGqZNyN9nmNhvrZU5',
  'HFqU5x63VTqvQss8hp11i4wVV8bD44PvwucfZ2bU7gRe',
  'Cw8CFyM9FkoMi7K7Crf6HNQqf4uEMzpKw6QNghXLvLkY',
  'ADaUMid9yfUytqMBgopwjb2DTLSokTSzL1zt6iGPaS49',
  'DfXygSm4jCyNCybVYYK6DwvWqjKee8pbDmJGcLWNDXjh',
  'ADuUkR4vqLUMWXxW9gh6D6L8pMSawimctcNZ5pGwDcEt',
  'DttWaMuVvTiduZRnguLF7jNxTgiMBZ1hyAumKUiL2KRL',
  '3AVi9Tg9Uo68tJfuvoKvqKNWKkC5wPdSSdeBnizKZ6jT',
];
const TIPS = new Set(TIP_ACCOUNTS);
export const MAX_BUNDLE_TXS = 5;
const MAX_BODY = 1 << 20;
/** Bundles remembered for status calls; the oldest go first. */
const MAX_BUNDLES = 10_000;
export const NO_TIP = 'Bundles must write lock at least one tip account to be eligible for the auction.';
export const RATE_LIMITED = 'Network congested. Endpoint is globally rate limited.';

export interface BlockEngineKnobs {
  /** Share of accepted bundles (and transactions) that land, 0 to 1 (default 1). */
  bundleLandRate: number;
  /** How long after acceptance a bundle lands (default 400 ms). */
  bundleLandingMs: number;
  /** Calls a second answered at most; beyond, 429 (default 0: no limit). */
  engineRateLimit: number;
}

export interface BlockEngineOptions extends Partial<BlockEngineKnobs> {
  cluster: Cluster;
  /** 0 picks a free port. */
  port: number;
  host?: string;
}

type Status = 'Pending' | 'Landed' | 'Failed';

interface Bundle {
  id: string;
  txs: ParsedTx[];
  status: Status;
  slot: number;
}

export interface BlockEngine {
  readonly url: string;
  readonly port: number;
  readonly knobs: BlockEngineKnobs;
  /** Calls answered, calls refused with 429, bundles accepted, transactions taken on /api/v1/transactions, the last x-jito-auth header seen. */
  readonly stats: { calls: number; limited: number; bundles: number; transactions: number; auth: string | null };
  close(): Promise<void>;
}

class RpcError {
  constructor(
    readonly code: number,
    readonly message: string,
    readonly http = 400,
  ) {}
}

const invalid = (message: string): RpcError => new RpcError(-32602, message);

export async function startBlockEngine(opts: BlockEngineOptions): Promise<BlockEngine> {
  const engine = new Engine(opts);
  await engine.listen(opts.port, opts.host ?? '127.0.0.1');
  return engine;
}

class Engine implements BlockEngine {
  url = '';
  port = 0;
  readonly knobs: BlockEngineKnobs;
  readonly stats = { calls: 0, limited: 0, bundles: 0, transactions: 0, auth: null as string | null };
  private readonly cluster: Cluster;
  private readonly bundles = new Map<string, Bundle>();
  private readonly server: Server;
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Times of the calls in the last second (engineRateLimit). */
  private recent: number[] = [];

  constructor(opts: BlockEngineOptions) {
    this.cluster = opts.cluster;
    this.knobs = { bundleLandRate: opts.bundleLandRate ?? 1, bundleLandingMs: opts.bundleLandingMs ?? 400, engineRateLimit: opts.engineRateLimit ?? 0 };
    this.server = createServer((req, res) => this.request(req, res));
  }

  listen(port: number, host: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.port = (this.server.address() as AddressInfo).port;
        this.url = `http://${host}:${this.port}`;
        resolve();
      });
    });
  }

  private request(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'POST' || (path !== '/api/v1/bundles' && path !== '/api/v1/transactions')) {
      res.writeHead(404).end();
      return;
    }
    const auth = req.headers['x-jito-auth'];
    if (typeof auth === 'string') this.stats.auth = auth;
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on('end', () => {
      if (size > MAX_BODY) return void res.writeHead(413).end();
      this.answer(path, Buffer.concat(chunks), res);
    });
  }

  private answer(path: string, body: Buffer, res: ServerResponse): void {
    let id = 'null';
    let headers: Record<string, string> = {};
    const reply = (http: number, text: string): void => void res.writeHead(http, { 'content-type': 'application/json', ...headers }).end(text);
    const fail = (e: RpcError): void =>
      reply(e.http, '{"jsonrpc":"2.0","error":{"code":' + e.code + ',"message":' + JSON.stringify(e.message) + '},"id":' + id + '}');
    let req: { method?: unknown; params?: unknown; id?: unknown };
    try {
      req = JSON.parse(body.toString('utf8')) as typeof req;
      if (req === null || typeof req !== 'object' || Array.isArray(req)) throw new Error('not a request');
    } catch {
      return fail(new RpcError(-32700, 'Parse error'));
    }
    if (typeof req.id === 'number' || typeof req.id === 'string') id = JSON.stringify(req.id);
    if (!this.admit(Date.now())) {
      this.stats.limited++;
      return fail(new RpcError(-32097, RATE_LIMITED, 429));
    }
    this.stats.calls++;
    try {
      let result: unknown;
      if (path === '/api/v1/transactions') {
        if (req.method !== 'sendTransaction') throw new RpcError(-32601, 'Method not found');
        const sig = this.sendTransaction(req.params);
        headers = { 'x-bundle-id': bundleId([sig]) };
        result = sig;
      } else result = this.call(req.method, req.params);
      reply(200, '{"jsonrpc":"2.0","result":' + JSON.stringify(result) + ',"id":' + id + '}');
    } catch (e) {
      if (!(e instanceof RpcError)) throw e;
      fail(e);
    }
  }

  /** engineRateLimit: at most that many calls in any second. */
  private admit(now: number): boolean {
    const limit = this.knobs.engineRateLimit;
    if (limit <= 0) return true;
    this.recent = this.recent.filter((t) => t > now - 1000);
    if (this.recent.length >= limit) return false;
    this.recent.push(now);
    return true;
  }

  private call(method: unknown, params: unknown): unknown {
    switch (method) {
      case 'sendBundle':
        return this.sendBundle(params);
      case 'getTipAccounts':
        return TIP_ACCOUNTS;
      case 'getBundleStatuses':
        return { context: { slot: this.cluster.tip() }, value: ids(params).map((id) => this.landedStatus(id)) };
      case 'getInflightBundleStatuses':
        return { context: { slot: this.cluster.tip() }, value: ids(params).map((id) => this.inflight(id)) };
      default:
        throw new RpcError(-32601, 'Method not found');
    }
  }

  private sendBundle(params: unknown): string {
    if (!Array.isArray(params) || !Array.isArray(params[0]) || params[0].length === 0) throw invalid('Invalid params: expected a list of transactions');
    const list = params[0] as unknown[];
    if (list.length > MAX_BUNDLE_TXS) throw invalid(`bundle contains ${list.length} transactions, at most ${MAX_BUNDLE_TXS} are allowed`);
    const txs = list.map((t, i) => decodeTx(t, encodingOf(params[1]), i));
    if (!txs.some((tx) => tx.keys.some((k, i) => TIPS.has(k) && isWritable(tx, i)))) throw invalid(NO_TIP);
    const id = bundleId(txs.map((tx) => tx.signatures[0]!));
    if (this.bundles.has(id)) return id;
    if (this.bundles.size >= MAX_BUNDLES) this.bundles.delete(this.bundles.keys().next().value!);
    const bundle: Bundle = { id, txs, status: 'Pending', slot: 0 };
    this.bundles.set(id, bundle);
    this.stats.bundles++;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.land(bundle);
    }, this.knobs.bundleLandingMs);
    timer.unref();
    this.timers.add(timer);
    return id;
  }

  /** All or nothing: every transaction must be new, within its blockhash's life and run without error now. */
  private land(b: Bundle): void {
    const ledger = this.cluster.ledger;
    const tip = this.cluster.tip();
    const ok =
      Math.random() < this.knobs.bundleLandRate &&
      b.txs.every((tx) => {
        const made = slotOfBlockhash(tx.blockhash);
        return made >= 0 && tip + 1 - made <= BLOCKHASH_VALID_SLOTS && ledger.record(tx.signatures[0]!) === undefined && ledger.simulate(tx, true).err === null;
      });
    if (!ok) {
      b.status = 'Failed';
      return;
    }
    let slot = 0;
    for (const tx of b.txs) slot = ledger.land(tx)?.slot ?? slot;
    b.status = 'Landed';
    b.slot = slot;
  }

  private sendTransaction(params: unknown): string {
    if (!Array.isArray(params) || params.length === 0) throw invalid('Invalid params: expected a transaction');
    const tx = decodeTx(params[0], encodingOf(params[1]), 0);
    this.stats.transactions++;
    if (Math.random() < this.knobs.bundleLandRate) this.cluster.forward(tx, this.knobs.bundleLandingMs, 0);
    return tx.signatures[0]!;
  }

  private landedStatus(id: string): unknown {
    const b = this.bundles.get(id);
    if (b === undefined || b.status !== 'Landed') return null;
    const tip = this.cluster.tip();
    const level = tip - b.slot >= DEFAULT_KNOBS.finalizeDepth ? 'finalized' : tip - b.slot >= DEFAULT_KNOBS.confirmDepth ? 'confirmed' : 'processed';
    return { bundle_id: id, transactions: b.txs.map((tx) => tx.signatures[0]!), slot: b.slot, confirmation_status: level, err: { Ok: null } };
  }

  private inflight(id: string): unknown {
    const b = this.bundles.get(id);
    if (b === undefined) return { bundle_id: id, status: 'Invalid', landed_slot: null };
    return { bundle_id: id, status: b.status, landed_slot: b.status === 'Landed' ? b.slot : null };
  }

  close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A bundle's id: the sha256 of its transactions' signatures joined by commas, in hex. */
export function bundleId(signatures: readonly string[]): string {
  return createHash('sha256').update(signatures.join(',')).digest('hex');
}

function encodingOf(opts: unknown): 'base58' | 'base64' {
  const e = opts !== null && typeof opts === 'object' ? (opts as { encoding?: unknown }).encoding : undefined;
  if (e === undefined) return 'base58';
  if (e === 'base58' || e === 'base64') return e;
  throw invalid('Invalid params: encoding must be base58 or base64');
}

function decodeTx(t: unknown, encoding: 'base58' | 'base64', i: number): ParsedTx {
  if (typeof t !== 'string') throw invalid(`Invalid params: transaction #${i} is not a string`);
  const bytes = encoding === 'base64' ? (/^[A-Za-z0-9+/]*={0,2}$/.test(t) ? Buffer.from(t, 'base64') : null) : decodeBase58(t);
  if (bytes === null || bytes.length === 0) throw invalid(`transaction #${i} could not be decoded as ${encoding}`);
  let tx: ParsedTx;
  try {
    tx = parseTx(Buffer.from(bytes));
  } catch {
    throw invalid(`transaction #${i} could not be deserialized`);
  }
  if (!verifySignatures(tx)) throw invalid(`transaction #${i} has an invalid signature`);
  return tx;
}

function ids(params: unknown): string[] {
  if (!Array.isArray(params) || !Array.isArray(params[0]) || params[0].length === 0 || params[0].length > 5 || !params[0].every((x) => typeof x === 'string'))
    throw invalid('Invalid params: expected a list of 1 to 5 bundle ids');
  return params[0] as string[];
}
