// The simulated Solana node's HTTP server. It is the upstream in benchmarks, so the hot
// path avoids per-request allocation beyond the body view and the response string.

import { serverEngine, type ServerChoice } from '../../server/engine.js';
import { copyOf, viewOf } from '../../server/chunk.js';
import type { HttpApp, HttpRes as HttpResponse, ListenSocket, ServerEngine } from '../../server/types.js';
import { Cluster, sharedCluster } from './cluster.js';
import { respond, type Exec } from './envelope.js';
import { checkKnobs, DEFAULT_KNOBS, KnobError, KNOB_NAMES, type SimKnobs } from './knobs.js';
import { callMethod, MethodEnv, unhealthyError } from './methods.js';
import { METHOD_NOT_FOUND, RateCap } from './rate-cap.js';
import { SimWs, type WsStats } from './ws.js';

export type { FailMode, SimKnobs } from './knobs.js';
export { KnobError } from './knobs.js';
export { blockHeightOf, blockhashOf, rootOf, trueSlot, tipSlot } from './chain.js';
export { Cluster, sharedCluster } from './cluster.js';

export interface SimOptions extends Partial<SimKnobs> {
  id: string;
  /** 0 picks a free port. */
  port: number;
  /** Default 127.0.0.1. */
  host?: string;
  /**
   * The chain this node sees; default: the process's cluster for its slotMs, shared by every
   * node started without one (docs/simulator.md "One cluster, many nodes").
   */
  cluster?: Cluster;
  /** The HTTP/WebSocket server engine (src/server/engine.ts); default auto. */
  server?: ServerChoice;
}

export interface SimStats extends WsStats {
  /** HTTP requests to the RPC endpoint. */
  requests: number;
  /** JSON-RPC calls, batch elements included. */
  calls: number;
  byMethod: Map<string, number>;
  /** Requests answered 429 for being over rateCap, and credits spent within it (rateCap only). */
  limited: number;
  credits: number;
}

export interface SimNode {
  readonly id: string;
  readonly port: number;
  readonly url: string;
  /** WebSocket (PubSub) on the HTTP port: ws://host:P. */
  readonly wsUrl: string;
  /**
   * The same WebSocket on P+1, where @solana/web3.js v1 looks for it; '' when an explicit
   * port was given and P+1 was taken (with port 0 the sim picks P so that P+1 is free).
   */
  readonly wsUrlPlusOne: string;
  /** The node's processed slot (the cluster's tip minus its lag). */
  slot(): number;
  /** The node's slot at each commitment: [processed, confirmed, finalized]. */
  views(): [number, number, number];
  /** The chain this node sees. */
  readonly cluster: Cluster;
  /** Changes knobs live; throws KnobError naming a bad knob. */
  set(knobs: Partial<SimKnobs>): void;
  knobs(): SimKnobs;
  readonly stats: SimStats;
  /** Stops listening (both ports) and closes every open connection, WebSockets included. */
  close(): Promise<void>;
}

const MAX_BODY = 16 * 1024 * 1024;
// Method names come from clients; past this many distinct names the rest share one entry.
const BY_METHOD_MAX = 1000;
const OTHER_METHODS = '(other)';
const JSON_TYPE = 'application/json';
const OK = '200 OK';
/** The gateway's health prober announces itself (upstream/probe-client.ts): slowRate spares it. */
const PROBE_AGENT = 'jumpgate-health';
const PICK_PORT_ATTEMPTS = 20;

interface Pending extends HttpResponse {
  aborted?: boolean;
  done?: boolean;
}

/** Collects a request body; a single-chunk body is a view valid only during `cb`. */
function readBody(res: Pending, cb: (body: Buffer) => void): void {
  let chunks: Buffer[] | null = null;
  let size = 0;
  res.onData((ab, isLast) => {
    if (res.aborted === true || res.done === true) return;
    if (isLast && chunks === null) {
      const v = viewOf(ab);
      cb(Buffer.from(v.buffer, v.byteOffset, v.byteLength));
      return;
    }
    size += ab.byteLength;
    if (size > MAX_BODY) {
      res.done = true;
      res.writeStatus('413 Payload Too Large').end('', true);
      return;
    }
    // uWS neuters the ArrayBuffer on return, so a partial body must be copied.
    (chunks ??= []).push(copyOf(ab));
    if (isLast) cb(Buffer.concat(chunks, size));
  });
}

function write(res: Pending, status: string, type: string, text: string): void {
  res.done = true;
  if (status !== OK) res.writeStatus(status);
  res.writeHeader('Content-Type', type).end(text);
}

class Sim implements SimNode {
  readonly stats: SimStats = {
    requests: 0,
    calls: 0,
    byMethod: new Map(),
    wsConnections: 0,
    wsSubscriptions: 0,
    wsSubscriptionsByMethod: new Map(),
    wsMessages: 0,
    limited: 0,
    credits: 0,
  };
  private readonly cap = new RateCap();
  port = 0;
  url = '';
  wsUrl = '';
  wsUrlPlusOne = '';
  private readonly ws: SimWs;
  private readonly state: SimKnobs;
  private readonly env: MethodEnv;
  readonly app: HttpApp;
  private closed = false;
  /** Whether the cluster was given (then slotMs cannot move the node to another). */
  private readonly ownCluster: boolean;

  /** A call of the request being answered may be slowed (slowMethods; getHealth never is). */
  private slowable = false;

  private readonly ok: Exec = (method, params) => {
    this.count(method);
    if (this.state.disabledMethods.length > 0 && this.state.disabledMethods.includes(method)) return METHOD_NOT_FOUND;
    if (method !== 'getHealth' && (this.state.slowMethods.length === 0 || this.state.slowMethods.includes(method))) this.slowable = true;
    return callMethod(method, params, this.env);
  };

  get cluster(): Cluster {
    return this.env.cluster;
  }

  private readonly failing: Exec = (method) => {
    this.count(method);
    return unhealthyError(null);
  };

  constructor(
    readonly id: string,
    knobs: SimKnobs,
    cluster: Cluster | undefined,
    private readonly engine: ServerEngine,
  ) {
    this.state = knobs;
    this.ownCluster = cluster !== undefined;
    this.env = new MethodEnv(id, knobs, cluster ?? sharedCluster(knobs.slotMs));
    if (knobs.skipRate > 0) this.env.cluster.skipRate = knobs.skipRate;
    this.ws = new SimWs(
      {
        env: () => {
          this.env.refresh();
          return this.env;
        },
        slotMs: () => this.state.slotMs,
        wsDrop: () => this.state.wsDrop,
      },
      this.stats,
    );
    this.app = engine
      .app(null)
      .ws('/*', this.ws.behavior)
      .post('/sim/control', (res: Pending) => this.onControl(res))
      .get('/sim/stats', (res) => {
        res.writeHeader('Content-Type', JSON_TYPE).end(this.statsJson());
      })
      // Solana's plain-HTTP health check, for probes that do not speak JSON-RPC.
      .get('/health', (res) => {
        this.env.refresh();
        res.end(this.state.unhealthy || this.env.behind() >= 0 ? 'behind' : 'ok');
      })
      .post('/*', (res: Pending, req) => this.onRpc(res, req.getHeader('user-agent') === PROBE_AGENT))
      .any('/*', (res) => {
        res.writeStatus('405 Method Not Allowed').end('Used HTTP Method is not allowed. POST is required');
      });
  }

  slot(): number {
    this.env.refresh();
    return this.env.processed;
  }

  views(): [number, number, number] {
    this.env.refresh();
    const v = this.env.views;
    return [v[0]!, v[1]!, v[2]!];
  }

  set(knobs: Partial<SimKnobs>): void {
    const checked = checkKnobs(knobs);
    const confirm = checked.confirmDepth ?? this.state.confirmDepth;
    if (confirm > (checked.finalizeDepth ?? this.state.finalizeDepth)) throw new KnobError('confirmDepth', 'confirmDepth must be at most finalizeDepth');
    if (this.ownCluster && checked.slotMs !== undefined && checked.slotMs !== this.env.cluster.slotMs) {
      throw new KnobError('slotMs', `slotMs is the cluster's (${this.env.cluster.slotMs}): start another cluster for another slot time`);
    }
    Object.assign(this.state, checked);
    if (checked.skipRate !== undefined) this.env.cluster.skipRate = checked.skipRate;
    // Slot time belongs to a cluster: a node on the process's clusters moves to that slot time's.
    if (checked.slotMs !== undefined && !this.ownCluster && checked.slotMs !== this.env.cluster.slotMs) this.env.cluster = sharedCluster(checked.slotMs);
    this.env.refresh(true);
    if (checked.wsDrop === true) this.ws.dropAll(1001, 'wsDrop');
  }

  knobs(): SimKnobs {
    const s = this.state;
    return {
      ...s,
      latencyMs: [s.latencyMs[0], s.latencyMs[1]],
      slowMethods: [...s.slowMethods],
      methodCosts: { ...s.methodCosts },
      disabledMethods: [...s.disabledMethods],
    };
  }

  close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.ws.close();
      this.app.close();
    }
    return Promise.resolve();
  }

  private count(method: string): void {
    const m = this.stats.byMethod;
    const n = m.get(method);
    if (n !== undefined) m.set(method, n + 1);
    else if (m.size < BY_METHOD_MAX) m.set(method, 1);
    else m.set(OTHER_METHODS, (m.get(OTHER_METHODS) ?? 0) + 1);
  }

  private statsJson(): string {
    const { requests, calls, byMethod, limited, credits } = this.stats;
    return JSON.stringify({ requests, calls, byMethod: Object.fromEntries(byMethod), limited, credits });
  }

  private onRpc(res: Pending, probe: boolean): void {
    this.stats.requests++;
    res.onAborted(() => {
      res.aborted = true;
    });
    readBody(res, (body) => this.answer(res, body, probe));
  }

  private answer(res: Pending, body: Buffer, probe: boolean): void {
    const k = this.state;
    if (k.rateCap > 0 && !probe && !this.cap.admit(res, body, k, this.stats)) return;
    // One draw per request, split into bands: drop, stall, fail (500 half first), answer.
    const r = Math.random();
    const stallEnd = k.dropRate + k.stallRate;
    const failEnd = stallEnd + k.failRate;
    let http500 = false;
    let rpcError = false;
    if (r >= stallEnd && r < failEnd) {
      const mode = k.failMode === 'mixed' ? (r - stallEnd < k.failRate / 2 ? 'http500' : 'rpc-error') : k.failMode;
      http500 = mode === 'http500';
      rpcError = !http500;
    }
    // Parsed even when the answer is withheld so stats show what reached the node.
    this.env.refresh();
    this.slowable = false;
    const text = respond(body, rpcError ? this.failing : this.ok, this.stats);
    // A draw of its own, so slowRate does not shift the fail and stall bands.
    const slowMs = k.slowRate > 0 && !probe && this.slowable && Math.random() < k.slowRate ? k.slowMs : 0;
    if (r < k.dropRate) {
      res.done = true;
      res.close();
    } else if (r < stallEnd) {
      // Never answered: the client's abort (or close()) ends it.
    } else if (http500) {
      this.reply(res, '500 Internal Server Error', 'text/plain', 'Internal Server Error', slowMs);
    } else {
      this.reply(res, OK, JSON_TYPE, text, slowMs);
    }
  }

  private reply(res: Pending, status: string, type: string, text: string, slowMs: number): void {
    const [lo, hi] = this.state.latencyMs;
    if (hi <= 0 && slowMs <= 0) {
      write(res, status, type, text);
      return;
    }
    setTimeout(
      () => {
        if (res.aborted !== true) res.cork(() => write(res, status, type, text));
      },
      slowMs + lo + Math.random() * (hi - lo),
    ).unref(); // the server keeps the loop alive; after close() a pending reply must not
  }

  private onControl(res: Pending): void {
    res.onAborted(() => {
      res.aborted = true;
    });
    readBody(res, (body) => {
      let status = OK;
      let text: string;
      try {
        this.set(JSON.parse(body.toString('utf8')) as Partial<SimKnobs>);
        text = JSON.stringify(this.knobs());
      } catch (e) {
        status = '400 Bad Request';
        text = JSON.stringify({ error: e instanceof SyntaxError ? 'body is not JSON' : (e as Error).message });
      }
      write(res, status, JSON_TYPE, text);
    });
  }

  /** Listens on P and P+1 (web3.js v1 looks for the WS on P+1); port 0 picks P with P+1 free. */
  async listen(host: string, port: number): Promise<this> {
    const name = host.includes(':') ? `[${host}]` : host;
    const engine = this.engine;
    // Exclusive: a second process must not share the port (SO_REUSEPORT).
    let main: ListenSocket | null = null;
    let plusOne: ListenSocket | null = null;
    for (let i = 0; i < (port === 0 ? PICK_PORT_ATTEMPTS : 1) && plusOne === null; i++) {
      main = await engine.listen(this.app, host, port, true);
      if (main === null) break;
      const p = engine.localPort(main);
      if (p < 65535) plusOne = await engine.listen(this.app, host, p + 1, true);
      if (plusOne === null && port === 0) {
        engine.closeListen(main);
        main = null;
      }
    }
    if (main === null) {
      this.app.close();
      throw new Error(port === 0 ? `sim node ${this.id}: found no free port pair P, P+1 on ${host}` : `sim node ${this.id}: cannot listen on ${host}:${port}`);
    }
    this.port = engine.localPort(main);
    this.url = `http://${name}:${this.port}`;
    this.wsUrl = `ws://${name}:${this.port}`;
    this.wsUrlPlusOne = plusOne === null ? '' : `ws://${name}:${this.port + 1}`;
    return this;
  }
}

export async function startSim(opts: SimOptions): Promise<SimNode> {
  const given: Record<string, unknown> = {};
  for (const k of KNOB_NAMES) given[k] = opts[k];
  const knobs: SimKnobs = { ...DEFAULT_KNOBS, latencyMs: [0, 0], ...checkKnobs(given) };
  if (opts.cluster !== undefined && opts.slotMs === undefined) knobs.slotMs = opts.cluster.slotMs;
  if (opts.cluster !== undefined && knobs.slotMs !== opts.cluster.slotMs)
    throw new KnobError('slotMs', `slotMs ${knobs.slotMs} differs from the cluster's ${opts.cluster.slotMs}`);
  const sim = new Sim(opts.id, knobs, opts.cluster, serverEngine(opts.server ?? 'auto'));
  if (!knobs.synthetic) sim.cluster.ledger.warm();
  return sim.listen(opts.host ?? '127.0.0.1', opts.port);
}
