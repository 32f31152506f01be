// The simulated node's WebSocket (PubSub) part: slotSubscribe, rootSubscribe,
// accountSubscribe and their unsubscribes, with notifications in Solana's exact shapes.
// One timer per sim drives every subscription; each notification is built once per tick
// and kind (per account group) and only the subscription id is spliced in per socket.

import type { HttpRequest, HttpResponse, us_socket_context_t, WebSocket, WebSocketBehavior } from 'uWebSockets.js';
import { encodeBase58 } from './base58.js';
import { accountOf, rootOf, trueSlot } from './chain.js';
import { PARSE_ERROR } from './envelope.js';
import { INVALID_PARAMS, METHOD_NOT_FOUND } from './methods.js';
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
  /** The slot as served (lag applied). */
  slot(): number;
  slotMs(): number;
  /** While true, upgrades are refused with 503. */
  wsDrop(): boolean;
}

const enum Kind {
  Slot = 0,
  Root = 1,
  Account = 2,
}

const SUBSCRIBE = ['slotSubscribe', 'rootSubscribe', 'accountSubscribe'] as const;

/** Per-connection state: its live subscription ids and their kinds. */
export interface Conn {
  subs: Map<number, Kind>;
}

type Socket = WebSocket<Conn>;

/** Account subscriptions that share a pubkey and encoding share one notification text. */
interface AccountGroup {
  key: string;
  /** '{"data":…,"executable":false,"lamports":' */
  head: string;
  lamports: number;
  /** ',"owner":…,"space":N}' */
  tail: string;
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
const ENCODINGS = new Set(['binary', 'base58', 'base64', 'jsonParsed']);
/** As on Solana, base58 data longer than this is replaced by an error string. */
const MAX_BASE58_BYTES = 128;
const BS58_TOO_LARGE = 'error: data too large for bs58 encoding';
const COMMITMENTS = new Set(['processed', 'confirmed', 'finalized']);
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

/** The group key of accountSubscribe params, or null when malformed. */
function accountKey(p: unknown): { pubkey: string; encoding: string } | null {
  if (!Array.isArray(p) || p.length < 1 || p.length > 2) return null;
  const pubkey: unknown = p[0];
  if (typeof pubkey !== 'string' || pubkey.length === 0) return null;
  const cfg: unknown = p[1];
  // Solana's PubSub default is the legacy 'binary': data as a bare base58 string.
  let encoding = 'binary';
  if (cfg !== undefined && cfg !== null) {
    if (typeof cfg !== 'object' || Array.isArray(cfg)) return null;
    const { encoding: e, commitment: c } = cfg as { encoding?: unknown; commitment?: unknown };
    if (e !== undefined && e !== null) {
      if (typeof e !== 'string' || !ENCODINGS.has(e)) return null;
      // System-owned data does not parse, so jsonParsed falls back to base64 as on Solana.
      encoding = e === 'jsonParsed' ? 'base64' : e;
    }
    if (c !== undefined && c !== null && (typeof c !== 'string' || !COMMITMENTS.has(c))) return null;
  }
  return { pubkey, encoding };
}

export class SimWs {
  readonly behavior: WebSocketBehavior<Conn>;
  private nextId = 0;
  private readonly sockets = new Set<Socket>();
  private readonly slotSubs = new Map<number, Socket>();
  private readonly rootSubs = new Map<number, Socket>();
  private readonly accountSubs = new Map<number, AccountGroup>();
  private readonly groups = new Map<string, AccountGroup>();
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

  private onUpgrade(res: HttpResponse, req: HttpRequest, context: us_socket_context_t): void {
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

  private onMessage(ws: Socket, message: ArrayBuffer): void {
    this.stats.wsMessages++;
    const body = Buffer.from(message);
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
        const key = accountKey(params);
        return key === null ? INVALID_PARAMS : this.add(ws, Kind.Account, this.group(key.pubkey, key.encoding));
      }
      case 'slotUnsubscribe':
        return this.unsubscribe(ws, Kind.Slot, params);
      case 'rootUnsubscribe':
        return this.unsubscribe(ws, Kind.Root, params);
      case 'accountUnsubscribe':
        return this.unsubscribe(ws, Kind.Account, params);
      default:
        return METHOD_NOT_FOUND;
    }
  }

  private group(pubkey: string, encoding: string): AccountGroup {
    const key = encoding + ':' + pubkey;
    let g = this.groups.get(key);
    if (g === undefined) {
      const a = accountOf(pubkey);
      let data: string;
      if (encoding === 'base64') data = '["' + a.data.toString('base64') + '","base64"]';
      else {
        const b58 = a.data.length <= MAX_BASE58_BYTES ? encodeBase58(a.data) : BS58_TOO_LARGE;
        data = encoding === 'base58' ? '["' + b58 + '","base58"]' : '"' + b58 + '"';
      }
      g = {
        key,
        head: '{"data":' + data + ',"executable":false,"lamports":',
        lamports: a.lamports,
        tail: ',"owner":"11111111111111111111111111111111","rentEpoch":18446744073709551615,"space":' + a.data.length + '}',
        subs: new Map(),
      };
      this.groups.set(key, g);
    }
    return g;
  }

  private add(ws: Socket, kind: Kind, group: AccountGroup | null): string {
    const id = this.nextId++;
    ws.getUserData().subs.set(id, kind);
    if (kind === Kind.Slot) this.slotSubs.set(id, ws);
    else if (kind === Kind.Root) this.rootSubs.set(id, ws);
    else {
      group!.subs.set(id, ws);
      this.accountSubs.set(id, group!);
    }
    const st = this.stats;
    st.wsSubscriptions++;
    const m = SUBSCRIBE[kind];
    st.wsSubscriptionsByMethod.set(m, (st.wsSubscriptionsByMethod.get(m) ?? 0) + 1);
    this.startTimer();
    return '"result":' + id;
  }

  private unsubscribe(ws: Socket, kind: Kind, params: unknown): string {
    const id = unsubscribeId(params);
    if (id < 0) return INVALID_PARAMS;
    const subs = ws.getUserData().subs;
    if (subs.get(id) !== kind) return INVALID_SUB_ID;
    subs.delete(id);
    this.remove(id, kind);
    return TRUE;
  }

  /** Forgets a live subscription (the connection's own map is the caller's business). */
  private remove(id: number, kind: Kind): void {
    if (kind === Kind.Slot) this.slotSubs.delete(id);
    else if (kind === Kind.Root) this.rootSubs.delete(id);
    else {
      const g = this.accountSubs.get(id);
      this.accountSubs.delete(id);
      if (g !== undefined) {
        g.subs.delete(id);
        if (g.subs.size === 0) this.groups.delete(g.key);
      }
    }
    const st = this.stats;
    st.wsSubscriptions--;
    const m = SUBSCRIBE[kind];
    const n = (st.wsSubscriptionsByMethod.get(m) ?? 1) - 1;
    if (n > 0) st.wsSubscriptionsByMethod.set(m, n);
    else st.wsSubscriptionsByMethod.delete(m);
    if (this.stats.wsSubscriptions === 0) this.stopTimer();
  }

  private startTimer(): void {
    if (this.timer !== null || this.closed) return;
    // The first notification is for the next slot, as on a real node.
    this.lastSlot = this.host.slot();
    this.lastRoot = rootOf(this.lastSlot);
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
    const slot = this.host.slot();
    if (slot !== this.lastSlot) {
      // A late timer notifies the slots it missed; a jump (lag changed) notifies only the new one.
      const from = slot > this.lastSlot && slot - this.lastSlot <= MAX_CATCH_UP ? this.lastSlot + 1 : slot;
      for (let s = from; s <= slot; s++) this.notify(s);
      this.lastSlot = slot;
    }
    this.schedule();
  };

  private notify(slot: number): void {
    const root = rootOf(slot);
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
