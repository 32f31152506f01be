// Coalescing (docs/routing.md "Coalescing"): identical calls (same method, same params bytes, same
// affinity node) of methods in `routing.coalesce.methods` share one upstream call. Each
// caller keeps its own Exchange: its own id (spliced into the shared answer's bytes, the
// result never re-encoded), its own usage record and its own answer. A caller joins a call
// only while that call was not written yet, or was sent at most `windowMs` before the caller
// arrived, so nobody gets an answer older than they accept. Per data-plane worker: with
// rpc.workers N, up to N identical calls reach the nodes at once.

import { PARAMS_KEY } from '../rpc/bytes.js';
import type { CallEvents, CallReach } from '../upstream/call-policy.js';
import { UpstreamCall, type CallOwner } from '../upstream/call.js';
import type { RouteRequest, Router } from '../upstream/router.js';
import { ID_KEY, memberSpan, trimmedSpan } from '../rpc/scan.js';

/** Params longer than this are not worth a key (polling methods have tiny params). */
const MAX_PARAMS_BYTES = 2048;
/** Scratch span for memberSpan: one request is keyed at a time. */
const span = new Int32Array(2);

/** What the coalescer needs of a caller (an Exchange). */
export interface CoalescedCaller {
  /** performance.now() when its request was accepted. */
  readonly startedAt: number;
  readonly body: Buffer | null;
  /** The shared call ended; `response` is the answer with this caller's id, or null on error. */
  sharedDone(call: UpstreamCall, response: Buffer | null): void;
}

/** The request routing is asked about to name a keyed call's node: a call not yet made. */
class KeyProbe implements RouteRequest {
  slot = -1;
  readonly tried = 0;
  method = '';
}

class SharedCall implements CallOwner {
  readonly callers: CoalescedCaller[] = [];
  call: UpstreamCall | null = null;

  constructor(
    readonly owner: Coalescer,
    readonly key: string,
  ) {}

  onCallDone(call: UpstreamCall): void {
    this.owner.ended(this);
    const answer = call.response;
    let s = -1;
    let e = -1;
    if (answer !== null) {
      const [as, ae] = trimmedSpan(answer);
      if (answer[as] === 0x7b && memberSpan(answer, as, ae, ID_KEY, span)) {
        s = span[0]!;
        e = span[1]!;
      }
    }
    const callers = this.callers;
    for (let i = 0; i < callers.length; i++) {
      const c = callers[i]!;
      // An answer without an id (a node that omits them) is passed as it is: that node would
      // have omitted the caller's id too.
      c.sharedDone(call, answer === null || s < 0 ? answer : withId(answer, s, e, c.body!));
    }
  }
}

/** `answer` with the id value at [s, e) replaced by the id bytes of request `body` (null when it has none). */
function withId(answer: Buffer, s: number, e: number, body: Buffer): Buffer {
  const [bs, be] = trimmedSpan(body);
  let is = 0;
  let ie = 0;
  if (memberSpan(body, bs, be, ID_KEY, span)) {
    is = span[0]!;
    ie = span[1]!;
  }
  const idLen = ie - is;
  if (idLen === 0) return answer;
  if (idLen === e - s && body.compare(answer, s, e, is, ie) === 0) return answer;
  const out = Buffer.allocUnsafe(answer.length - (e - s) + idLen);
  answer.copy(out, 0, 0, s);
  body.copy(out, s, is, ie);
  answer.copy(out, s + idLen, e);
  return out;
}

export class Coalescer {
  private readonly calls = new Map<string, SharedCall>();
  private readonly probe = new KeyProbe();

  constructor(
    private readonly router: Router,
    private windowMs: number,
    private readonly events: CallEvents,
  ) {}

  /** A reload: callers join calls sent at most `windowMs` before they arrived (calls in flight stay joinable). */
  reconfigure(windowMs: number): void {
    this.windowMs = windowMs;
  }

  /** Calls in flight that callers may still join (tests). */
  get size(): number {
    return this.calls.size;
  }

  /**
   * The call `caller` (a single request of `method` under `slot`) waits for: an identical one
   * in flight it may join, or a new one (not started: the caller starts it, attempts === 0).
   * Null when the request cannot be keyed.
   */
  enter(caller: CoalescedCaller, method: string, slot: number, timeoutMs: number, retrySafe: boolean, policy: CallReach): UpstreamCall | null {
    const body = caller.body!;
    const key = this.keyOf(body, method, slot);
    if (key === null) return null;
    const shared = this.calls.get(key);
    if (shared !== undefined) {
      const call = shared.call!;
      if (!call.finished && (!call.written || call.sentAt >= caller.startedAt - this.windowMs)) {
        shared.callers.push(caller);
        this.events.callEvent('coalesced');
        return call;
      }
    }
    // A newer call replaces the one too old to join; that one still answers its own callers.
    const fresh = new SharedCall(this, key);
    fresh.callers.push(caller);
    fresh.call = new UpstreamCall(fresh, this.router, body, method, slot, timeoutMs, retrySafe, true, 0, 0, policy);
    this.calls.set(key, fresh);
    return fresh.call;
  }

  ended(s: SharedCall): void {
    if (this.calls.get(s.key) === s) this.calls.delete(s.key);
  }

  /**
   * Method, params bytes and, under affinity, the node the call goes to (label rules included:
   * routing sees the method): calls that would reach the same node alike.
   */
  private keyOf(body: Buffer, method: string, slot: number): string | null {
    const [s, e] = trimmedSpan(body);
    if (body[s] !== 0x7b) return null;
    let params = '';
    if (memberSpan(body, s, e, PARAMS_KEY, span)) {
      if (span[1]! - span[0]! > MAX_PARAMS_BYTES) return null;
      params = body.toString('latin1', span[0]!, span[1]!);
    }
    let node = '';
    if (slot >= 0) {
      const probe = this.probe;
      probe.slot = slot;
      probe.method = method;
      const n = this.router.route(probe);
      if (n === null) return null;
      node = n.id;
    }
    return node + '\n' + method + '\n' + params;
  }
}
