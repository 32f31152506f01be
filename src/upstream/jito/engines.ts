// Jito block engines as a path (docs/jito.md): nodes of kind `jito` take only the bundle
// methods, POSTed to their /api/v1/bundles, and, with routing.broadcast.engines, a copy of each
// sendTransaction to their /api/v1/transactions. They never enter the node pool: no RPC traffic,
// no health probes, no affinity slots. Each engine's rate limit is applied here, before a call
// leaves, so the engine never sees more than it allows (window.ts). One set per data plane.
// Bundle calls are few (a handful a second per engine): a call is a small object and a promise.

import { availableParallelism } from 'node:os';
import { Pool } from 'undici';
import { jitoNodes } from '../../config/node-kinds.js';
import type { Config, NodeConfig } from '../../config/schema.js';
import { Errors, type GatewayErrorSpec } from '../../errors.js';
import type { Logger } from '../../log.js';
import { SendWindow } from './window.js';

/** The methods that go to block engines when any is configured. */
export const BUNDLE_METHODS: ReadonlySet<string> = new Set(['sendBundle', 'getBundleStatuses', 'getInflightBundleStatuses', 'getTipAccounts']);
export const DEFAULT_ENGINE_RATE = 5;
const BUNDLES_PATH = '/api/v1/bundles';
const TRANSACTIONS_PATH = '/api/v1/transactions';
/** An engine that could not be reached is passed over this long (another is asked first). */
const DOWN_MS = 5_000;
const MAX_ANSWER_BYTES = 1 << 20;
const CONNECT_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENOTFOUND', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET']);
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Who hears that an engine accepted a sendTransaction copy (the landing tracker). */
export interface CopySink {
  copyAccepted(engineId: string, token: string, request: Buffer, paramsStart: number, paramsEnd: number, answer: Buffer): void;
}

export interface EngineOwner {
  engineDone(call: EngineCall): void;
}

export class Engine {
  readonly origin: string;
  readonly prefix: string;
  readonly headers: Record<string, string>;
  readonly window: SendWindow;
  readonly pool: Pool;
  downUntil = 0;
  /** Calls sent (bundle methods and copies) and calls that got no answer. */
  sent = 0;
  failed = 0;
  constructor(
    readonly spec: NodeConfig,
    planes: number,
  ) {
    const u = new URL(spec.url);
    this.origin = u.origin;
    this.prefix = u.pathname.replace(/\/+$/, '').replace(/\/api\/v1(\/bundles|\/transactions)?$/, '');
    this.headers = { 'content-type': 'application/json', ...(spec.headers ?? {}) };
    this.window = SendWindow.forLimit(spec.rateLimit ?? DEFAULT_ENGINE_RATE, planes);
    this.pool = new Pool(this.origin, { connections: 4 });
  }
  get id(): string {
    return this.spec.id;
  }
}

/** One client call of a bundle method; the owner reads the fields once `engineDone` comes. */
export class EngineCall {
  status = 0;
  response: Buffer | null = null;
  error: GatewayErrorSpec | null = null;
  engine: Engine | null = null;
  attempts = 0;
  private tried: Engine[] = [];
  constructor(
    private readonly engines: BlockEngines,
    readonly owner: EngineOwner,
    readonly method: string,
    readonly body: Buffer,
    readonly timeoutMs: number,
  ) {}

  /** Whether a failure of this kind may go to another engine: reads always, sendBundle only when nothing reached the engine. */
  private retryable(connect: boolean): boolean {
    return connect || this.method !== 'sendBundle';
  }

  send(engine: Engine): void {
    this.engine = engine;
    this.attempts++;
    this.tried.push(engine);
    engine.sent++;
    void this.run(engine);
  }

  private async run(e: Engine): Promise<void> {
    let connect = false;
    try {
      const r = await e.pool.request({
        path: e.prefix + BUNDLES_PATH,
        method: 'POST',
        headers: e.headers,
        body: this.body,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const c of r.body as AsyncIterable<Buffer>) {
        size += c.length;
        if (size > MAX_ANSWER_BYTES) throw Object.assign(new Error('answer too large'), { code: 'JUMPGATE_TOO_LARGE' });
        chunks.push(c);
      }
      // Overloaded or failing: a read may ask another engine; anything else is the client's answer, unchanged.
      if ((r.statusCode >= 500 || r.statusCode === 429) && this.method !== 'sendBundle' && this.retry()) return;
      this.status = r.statusCode;
      this.response = Buffer.concat(chunks, size);
      this.error = null;
    } catch (err) {
      const code = (err as { code?: string }).code ?? '';
      connect = CONNECT_CODES.has(code);
      e.failed++;
      if (connect) e.downUntil = Date.now() + DOWN_MS;
      this.error = TIMEOUT_CODES.has(code) ? Errors.upstreamTimeout : code === 'JUMPGATE_TOO_LARGE' ? Errors.answerTooLarge : Errors.upstreamFailed;
      if (this.retryable(connect) && this.retry()) return;
    }
    this.owner.engineDone(this);
  }

  /** Sends to an engine not asked yet that has room now; false when there is none. */
  private retry(): boolean {
    const next = this.engines.pick(this.tried);
    if (next === null) return false;
    this.send(next);
    return true;
  }
}

export class BlockEngines {
  private engines: Engine[] = [];
  private next = 0;
  private planes: number;
  /** routing.broadcast.engines: sendTransaction also goes to an engine. */
  copiesSends = false;

  constructor(
    config: Config,
    private readonly log: Logger,
    private readonly sink: CopySink | null,
  ) {
    // Every data plane (each worker thread, or the inline one) sends its share of each engine's limit.
    const w = config.rpc.workers;
    this.planes = Math.max(1, w === 'auto' ? availableParallelism() : w);
    this.reconfigure(config);
  }

  get size(): number {
    return this.engines.length;
  }

  list(): readonly Engine[] {
    return this.engines;
  }

  /** A reload: engines whose spec is unchanged keep their window and connections. */
  reconfigure(config: Config): void {
    const specs = jitoNodes(config.nodes);
    const old = new Map(this.engines.map((e) => [e.id, e]));
    this.engines = specs.map((s) => {
      const e = old.get(s.id);
      if (e !== undefined && JSON.stringify(e.spec) === JSON.stringify(s)) {
        old.delete(s.id);
        return e;
      }
      return new Engine(s, this.planes);
    });
    for (const e of old.values()) void e.pool.close().catch(() => e.pool.destroy());
    this.copiesSends = config.routing.broadcast.engines && this.engines.length > 0;
  }

  /**
   * Sends a bundle method's call: 0 when it left, else the ms until an engine has room (every
   * engine is at its rate limit: docs/jito.md "Rate limit", 7429 with scope `engine`).
   */
  call(owner: EngineOwner, method: string, body: Buffer, timeoutMs: number): number {
    const engine = this.pick(null);
    if (engine === null) return this.waitMs();
    new EngineCall(this, owner, method, body, timeoutMs).send(engine);
    return 0;
  }

  /**
   * The next engine in turn that is not in `tried` and whose window takes a send now (the send
   * is counted); engines that could not be reached lately come last. Null when none has room.
   */
  pick(tried: readonly Engine[] | null): Engine | null {
    const list = this.engines;
    const n = list.length;
    if (n === 0) return null;
    const now = Date.now();
    const start = this.next++ % n;
    for (let pass = 0; pass < 2; pass++) {
      for (let k = 0; k < n; k++) {
        const e = list[(start + k) % n]!;
        if (tried !== null && tried.includes(e)) continue;
        if ((pass === 0) !== e.downUntil <= now) continue;
        if (e.window.take(now) === 0) return e;
      }
    }
    return null;
  }

  private waitMs(): number {
    const now = Date.now();
    let wait = Infinity;
    for (const e of this.engines) wait = Math.min(wait, e.window.wait(now));
    return Number.isFinite(wait) ? Math.max(1, wait) : 1000;
  }

  /** routing.broadcast.engines: the same sendTransaction to an engine with room, not awaited by the client. */
  copySend(body: Buffer, paramsStart: number, paramsEnd: number, token: string): void {
    const e = this.pick(null);
    if (e === null) return;
    e.sent++;
    // The client's body may go back to its slab once answered: the copy carries its own bytes.
    void this.copy(e, Buffer.from(body), paramsStart, paramsEnd, token);
  }

  private async copy(e: Engine, body: Buffer, paramsStart: number, paramsEnd: number, token: string): Promise<void> {
    try {
      const r = await e.pool.request({
        path: e.prefix + TRANSACTIONS_PATH,
        method: 'POST',
        headers: e.headers,
        body,
        headersTimeout: 5_000,
        bodyTimeout: 5_000,
      });
      const answer = Buffer.from(await r.body.arrayBuffer());
      if (r.statusCode === 200 && this.sink !== null) this.sink.copyAccepted(e.id, token, body, paramsStart, paramsEnd, answer);
    } catch (err) {
      e.failed++;
      this.log.debug({ err, engine: e.id }, 'block engine copy of a sendTransaction failed');
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.engines.map((e) => e.pool.close().catch(() => e.pool.destroy())));
  }
}
