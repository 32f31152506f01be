// The simulated node's WebSocket (PubSub) part: slotSubscribe, rootSubscribe and their
// unsubscribes here, the ledger's subscriptions (account, signature, logs, program) in
// ws-ledger.ts, with notifications in Solana's exact shapes. One timer per sim drives every
// subscription; slot, root and synthetic-account notifications are built once per tick and
// kind (per account group) and only the subscription id is spliced in per socket.

import { viewOf } from '../../server/chunk.js';
import type { BodyChunk, HttpReq, HttpRes, UpgradeContext, WsConn as WebSocket, WsBehavior } from '../../server/types.js';
import { trueSlot } from './chain.js';
import { PARSE_ERROR } from './envelope.js';
import type { MethodEnv } from './env.js';
import { INVALID_PARAMS, METHOD_NOT_FOUND } from './params.js';
import { LedgerSubs, type LedgerKind } from './ws-ledger.js';
import { accountKey, syntheticGroup, type SyntheticGroup } from './ws-synthetic.js';
import { arrayElements, ID_KEY, memberSpan, trimmedSpan } from '../../rpc/scan.js';

export interface WsStats {
  /** WebSocket connections open now. */
  wsConnections: number;
  /** Subscriptions live now. */
  wsSubscriptions: number;
  /** Live subscriptions by subscribe method (entries at zero are removed). */
  wsSubscriptionsByMethod: Map<string, number>;
  /** WebSocket messages received (pings included). */
  wsMessages: number;
}

/** What the hub needs from its node. */
export interface WsHost {
  /** The node's views, refreshed to now. */
  env(): MethodEnv;
  slotMs(): number;
  /** While true, upgrades are refused with 503. */
  wsDrop(): boolean;
}

const enum Kind {
  Slot = 0,
  Root = 1,
  /** A synthetic account (synthetic mode, a key the ledger never touched): notified every few slots. */
  Account = 2,
  /** account, signature, logs or program: ws-ledger.ts. */
  Ledger = 3,
}

const SUBSCRIBE = ['slotSubscribe', 'rootSubscribe', 'accountSubscribe'] as const;
const UNSUBSCRIBE: Record<string, LedgerKind> = {
  signatureUnsubscribe: 'signature',
  logsUnsubscribe: 'logs',
  programUnsubscribe: 'program',
};

/** Per-connection state: its live subscription ids and their kinds. */
export interface Conn {
  subs: Map<number, Kind>;
}

type Socket = WebSocket<Conn>;

/** Synthetic-account subscriptions that share a pubkey and encoding share one notification text. */
interface AccountGroup extends SyntheticGroup {
  key: string;
  subs: Map<number, Socket>;
}

const HEAD = '{"jsonrpc":"2.0",';
const INVALID_REQUEST = '"error":{"code":-32600,"message":"Invalid Request"}';
const INVALID_NULL_ID = HEAD + INVALID_REQUEST + ',"id":null}';
const INVALID_SUB_ID = '"error":{"code":-32602,"message":"Invalid subscription id."}';
const TRUE = '"result":true';
const SLOT_HEAD = '{"jsonrpc":"2.0","method":"slotNotification","params":{"result":{"parent":';
const ROOT_HEAD = '{"jsonrpc":"2.0","method":"rootNotification","params":{"result":';
const ACCOUNT_HEAD = '{"jsonrpc":"2.0","method":"accountNotification","params":{"result":{"context":{"slot":';
const SUB_MID = ',"subscription":';
const TAIL = '}}';

/** Account notifications go out on slots divisible by this. */
export const ACCOUNT_EVERY_SLOTS = 4;
/** A socket with more than this many bytes queued gets no notifications until it drains. */
const MAX_BUFFERED = 4 * 1024 * 1024;
/** After a late timer, missed slots are notified one by one up to this many. */
const MAX_CATCH_UP = 16;
/** Lamports of a subscribed account move with the slot so notifications differ. */
const LAMPORT_CYCLE = 1_000_000;

/** Milliseconds from `now` until the true slot next changes (>= 1). */
function msToNextSlot(slotMs: number, now: number): number {
  const cur = trueSlot(slotMs, now);
  let lo = 1;
  let hi = slotMs;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (trueSlot(slotMs, now + mid) > cur) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

function noParams(p: unknown): boolean {
  return p === undefined || p === null || (Array.isArray(p) && p.length === 0);
}

/** The subscription id of an unsubscribe's params, or -1 when malformed. */
function unsubscribeId(p: unknown): number {
  if (!Array.isArray(p) || p.length !== 1) return -1;
  const id: unknown = p[0];
  return typeof id === 'number' && Number.isSafeInteger(id) && id >= 0 ? id : -1;
}

export class SimWs {
  readonly behavior: WsBehavior<Conn>;
  private nextId = 0;
  private readonly sockets = new Set<Socket>();
  private readonly slotSubs = new Map<number, Socket>();
  private readonly rootSubs = new Map<number, Socket>();
  private readonly accountSubs = new Map<number, AccountGroup>();
  private readonly groups = new Map<string, AccountGroup>();
  private readonly ledgerSubs = new LedgerSubs();
  /** Subscribe method per live ledger subscription, for stats. */
  private readonly ledgerMethods = new Map<number, string>();
  private timer: NodeJS.Timeout | null = null;
  private lastSlot = -1;
  private lastRoot = -1;
  private closed = false;
  private readonly idSpan = new Int32Array(2);

  constructor(
    private readonly host: WsHost,
    private readonly stats: WsStats,
  ) {
    this.behavior = {
      compression: 0,
      maxPayloadLength: 1024 * 1024,
      idleTimeout: 120,
      sendPingsAutomatically: true,
      // Above our own MAX_BUFFERED check, so uWS never drops a message half-way through a tick.
      maxBackpressure: 4 * MAX_BUFFERED,
      closeOnBackpressureLimit: false,
      upgrade: (res, req, context) => this.onUpgrade(res, req, context),
      open: (ws) => {
        this.sockets.add(ws);
        this.stats.wsConnections++;
      },
      message: (ws, message) => this.onMessage(ws, message),
      close: (ws) => this.onClose(ws),
    };
  }

  /** Closes every open WebSocket (1001 Going Away by default). */
  dropAll(code = 1001, reason = 'going away'): void {
    for (const ws of [...this.sockets]) ws.end(code, reason);
  }

  /** Stops the timer and closes every connection; later upgrades are refused. */
  close(): void {
    this.closed = true;
    this.stopTimer();
    this.dropAll(1001, 'node shutting down');
  }

  private onUpgrade(res: HttpRes, req: HttpReq, context: UpgradeContext): void {
    if (this.closed || this.host.wsDrop()) {
      res.writeStatus('503 Service Unavailable').end('WebSocket unavailable');
      return;
    }
    res.upgrade<Conn>(
      { subs: new Map() },
      req.getHeader('sec-websocket-key'),
      req.getHeader('sec-websocket-protocol'),
      req.getHeader('sec-websocket-extensions'),
      context,
    );
  }

  private onClose(ws: Socket): void {
    this.sockets.delete(ws);
    this.stats.wsConnections--;
    for (const [id, kind] of ws.getUserData().subs) this.remove(id, kind);
    ws.getUserData().subs.clear();
  }

  private onMessage(ws: Socket, message: BodyChunk): void {
    this.stats.wsMessages++;
    const v = viewOf(message);
    const body = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
    let value: unknown;
    try {
      value = JSON.parse(body.toString('utf8'));
    } catch {
      ws.send(PARSE_ERROR);
      return;
    }
    const [s, e] = trimmedSpan(body);
    let out: string;
    if (!Array.isArray(value)) {
      out = this.answerOne(ws, value, body, s, e);
    } else if (value.length === 0) {
      out = INVALID_NULL_ID;
    } else {
      const spans: number[] = [];
      arrayElements(body, s, e, spans);
      out = '';
      for (let i = 0; i < value.length; i++) {
        const part = this.answerOne(ws, value[i], body, spans[2 * i]!, spans[2 * i + 1]!);
        if (part !== '') out += (out === '' ? '[' : ',') + part;
      }
      if (out !== '') out += ']';
    }
    if (out !== '') ws.send(out);
  }

  /** One call's response, or '' for a message without an id (such as clients' pings). */
  private answerOne(ws: Socket, v: unknown, body: Buffer, s: number, e: number): string {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return INVALID_NULL_ID;
    const req = v as { jsonrpc?: unknown; method?: unknown; params?: unknown; id?: unknown };
    const id = req.id;
    if (id !== undefined && id !== null && typeof id !== 'string' && typeof id !== 'number') return INVALID_NULL_ID;
    // No id: a notification. Nothing is done, since nobody could learn a subscription id.
    if (!memberSpan(body, s, e, ID_KEY, this.idSpan)) return '';
    const rawId = body.toString('utf8', this.idSpan[0], this.idSpan[1]);
    if (req.jsonrpc !== '2.0' || typeof req.method !== 'string') return HEAD + INVALID_REQUEST + ',"id":' + rawId + '}';
    return HEAD + this.call(ws, req.method, req.params) + ',"id":' + rawId + '}';
  }

  private call(ws: Socket, method: string, params: unknown): string {
    switch (method) {
      case 'slotSubscribe':
        return noParams(params) ? this.add(ws, Kind.Slot, null) : INVALID_PARAMS;
      case 'rootSubscribe':
        return noParams(params) ? this.add(ws, Kind.Root, null) : INVALID_PARAMS;
      case 'accountSubscribe': {
        const env = this.host.env();
        const pubkey: unknown = Array.isArray(params) ? params[0] : undefined;
        if (env.knobs.synthetic && typeof pubkey === 'string' && !env.cluster.ledger.knows(pubkey)) {
          const key = accountKey(params);
          return key === null ? INVALID_PARAMS : this.add(ws, Kind.Account, this.group(key.pubkey, key.encoding));
        }
        return this.addLedger(ws, method, params);
      }
      case 'signatureSubscribe':
      case 'logsSubscribe':
      case 'programSubscribe':
        return this.addLedger(ws, method, params);
      case 'slotUnsubscribe':
        return this.unsubscribe(ws, Kind.Slot, params);
      case 'rootUnsubscribe':
        return this.unsubscribe(ws, Kind.Root, params);
      case 'accountUnsubscribe':
        return ws.getUserData().subs.get(unsubscribeId(params)) === Kind.Ledger
          ? this.unsubscribe(ws, Kind.Ledger, params, 'account')
          : this.unsubscribe(ws, Kind.Account, params);
      case 'signatureUnsubscribe':
      case 'logsUnsubscribe':
      case 'programUnsubscribe':
        return this.unsubscribe(ws, Kind.Ledger, params, UNSUBSCRIBE[method]);
      default:
        return METHOD_NOT_FOUND;
    }
  }

  private addLedger(ws: Socket, method: string, params: unknown): string {
    const sub = this.ledgerSubs.parse(method, params, ws as WebSocket<unknown>);
    if (typeof sub === 'string') return sub;
    const startsTimer = this.timer === null;
    const answer = this.add(ws, Kind.Ledger, null, method);
    const id = this.nextId - 1;
    this.ledgerSubs.add(id, sub);
    if (startsTimer) this.ledgerSubs.start(this.host.env());
    return answer;
  }

  private group(pubkey: string, encoding: string): AccountGroup {
    const key = encoding + ':' + pubkey;
    let g = this.groups.get(key) as AccountGroup | undefined;
    if (g === undefined) this.groups.set(key, (g = { ...syntheticGroup(pubkey, encoding), key, subs: new Map() }));
    return g;
  }

  private add(ws: Socket, kind: Kind, group: AccountGroup | null, method = ''): string {
    const id = this.nextId++;
    ws.getUserData().subs.set(id, kind);
    if (kind === Kind.Slot) this.slotSubs.set(id, ws);
    else if (kind === Kind.Root) this.rootSubs.set(id, ws);
    else if (kind === Kind.Ledger) this.ledgerMethods.set(id, method);
    else {
      group!.subs.set(id, ws);
      this.accountSubs.set(id, group!);
    }
    const st = this.stats;
    st.wsSubscriptions++;
    const m = kind === Kind.Ledger ? method : SUBSCRIBE[kind];
    st.wsSubscriptionsByMethod.set(m, (st.wsSubscriptionsByMethod.get(m) ?? 0) + 1);
    this.startTimer();
    return '"result":' + id;
  }

  private unsubscribe(ws: Socket, kind: Kind, params: unknown, ledgerKind?: LedgerKind): string {
    const id = unsubscribeId(params);
    if (id < 0) return INVALID_PARAMS;
    const subs = ws.getUserData().subs;
    if (subs.get(id) !== kind || (kind === Kind.Ledger && this.ledgerSubs.kindOf(id) !== ledgerKind)) return INVALID_SUB_ID;
    subs.delete(id);
    this.remove(id, kind);
    return TRUE;
  }

  /** Forgets a live subscription (the connection's own map is the caller's business). */
  private remove(id: number, kind: Kind): void {
    let m: string;
    if (kind === Kind.Slot) this.slotSubs.delete(id);
    else if (kind === Kind.Root) this.rootSubs.delete(id);
    else if (kind === Kind.Ledger) this.ledgerSubs.remove(id);
    else {
      const g = this.accountSubs.get(id);
      this.accountSubs.delete(id);
      if (g !== undefined) {
        g.subs.delete(id);
        if (g.subs.size === 0) this.groups.delete(g.key);
      }
    }
    if (kind === Kind.Ledger) {
      m = this.ledgerMethods.get(id) ?? '';
      this.ledgerMethods.delete(id);
    } else m = SUBSCRIBE[kind];
    const st = this.stats;
    st.wsSubscriptions--;
    const n = (st.wsSubscriptionsByMethod.get(m) ?? 1) - 1;
    if (n > 0) st.wsSubscriptionsByMethod.set(m, n);
    else st.wsSubscriptionsByMethod.delete(m);
    if (this.stats.wsSubscriptions === 0) this.stopTimer();
  }

  private startTimer(): void {
    if (this.timer !== null || this.closed) return;
    // The first notification is for the next slot, as on a real node.
    const env = this.host.env();
    this.lastSlot = env.processed;
    this.lastRoot = env.views[2]!;
    this.ledgerSubs.start(env);
    this.schedule();
  }

  private stopTimer(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    // Unref'd: the listen sockets keep the process alive, and after close() nothing should.
    this.timer = setTimeout(this.tick, msToNextSlot(this.host.slotMs(), Date.now())).unref();
  }

  private readonly tick = (): void => {
    this.timer = null;
    if (this.closed || this.stats.wsSubscriptions === 0) return;
    const env = this.host.env();
    const slot = env.processed;
    if (slot !== this.lastSlot) {
      // A late timer notifies the slots it missed; a jump (lag changed) notifies only the new one.
      const from = slot > this.lastSlot && slot - this.lastSlot <= MAX_CATCH_UP ? this.lastSlot + 1 : slot;
      const depth = slot - env.views[2]!;
      for (let s = from; s <= slot; s++) this.notify(s, s - depth);
      this.lastSlot = slot;
    }
    if (this.ledgerSubs.size > 0) this.ledgerSubs.tick(env, send as (ws: WebSocket<unknown>, text: string) => void, this.fired);
    if (this.timer === null && this.stats.wsSubscriptions > 0) this.schedule();
  };

  /** A signature subscription that notified: gone, as on Agave. */
  private readonly fired = (id: number, ws: WebSocket<unknown>): void => {
    (ws as Socket).getUserData().subs.delete(id);
    this.remove(id, Kind.Ledger);
  };

  private notify(slot: number, root: number): void {
    if (this.slotSubs.size > 0) {
      const prefix = SLOT_HEAD + (slot - 1) + ',"root":' + root + ',"slot":' + slot + '}' + SUB_MID;
      for (const [id, ws] of this.slotSubs) send(ws, prefix + id + TAIL);
    }
    if (root !== this.lastRoot) {
      this.lastRoot = root;
      if (this.rootSubs.size > 0) {
        const prefix = ROOT_HEAD + root + SUB_MID;
        for (const [id, ws] of this.rootSubs) send(ws, prefix + id + TAIL);
      }
    }
    if (slot % ACCOUNT_EVERY_SLOTS === 0) {
      for (const g of this.groups.values()) {
        const lamports = g.lamports + (slot % LAMPORT_CYCLE);
        const prefix = ACCOUNT_HEAD + slot + '},"value":' + g.head + lamports + g.tail + '}' + SUB_MID;
        for (const [id, ws] of g.subs) send(ws, prefix + id + TAIL);
      }
    }
  }
}

function send(ws: Socket, text: string): void {
  if (ws.getBufferedAmount() <= MAX_BUFFERED) ws.send(text);
}
