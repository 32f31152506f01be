// How one call reaches nodes beyond the plain attempt-and-retry of call.ts, derived from
// `routing.broadcast`, `routing.hedge` and `routing.coalesce` (docs/routing.md "Broadcast sends",
// "Hedged reads", "Coalescing"); a long-lived service that a reload reconfigures.

import type { Config } from '../config/schema.js';
import type { CallEvent } from '../metrics/recorder.js';
import { HedgePlan } from './hedge.js';

type RoutingConfig = Config['routing'];

/** Where the call layer counts its routing events (the request recorder). */
export interface CallEvents {
  callEvent(kind: CallEvent): void;
}

/** Methods that change state: never hedged nor coalesced, whatever the lists say. */
const WRITES = ['sendTransaction', 'requestAirdrop', 'eth_sendRawTransaction', 'eth_sendTransaction'];

/** What a call asks of the policy when it is made (call.ts). */
export interface CallReach {
  fanoutFor(method: string): number;
  hedgeFor(method: string): HedgePlan | null;
  readonly events: CallEvents;
}

export class CallPolicy implements CallReach {
  /** Methods sent to `fanout` nodes at once. */
  private broadcast: ReadonlySet<string> = new Set();
  private fanout = 1;
  private hedges = new Map<string, HedgePlan>();
  /** Methods whose identical calls share one upstream call. */
  coalesce: ReadonlySet<string> = new Set();
  windowMs = 0;
  /** The same policy for calls under key or node affinity: broadcast as usual, never hedged (docs/routing.md "Hedged reads"). */
  readonly affine: CallReach;

  constructor(
    routing: RoutingConfig,
    readonly events: CallEvents,
  ) {
    this.affine = { fanoutFor: (method) => this.fanoutFor(method), hedgeFor: () => null, events };
    this.reconfigure(routing);
  }

  /** A reload: the lists and plans of `routing` from now on (hedge percentiles start afresh). */
  reconfigure(r: RoutingConfig): void {
    this.fanout = r.broadcast.fanout;
    this.broadcast = new Set(this.fanout > 1 ? r.broadcast.methods : []);
    const never = new Set([...r.noRetryMethods, ...r.broadcast.methods, ...WRITES]);
    // A method that must not run twice is never hedged, nor is a broadcast one (it already goes everywhere).
    const hedges = new Map<string, HedgePlan>();
    for (const m of r.hedge.methods) if (!never.has(m)) hedges.set(m, new HedgePlan(m, r.hedge));
    this.hedges = hedges;
    // Writes never share a call: no-retry, broadcast and known write methods are left out whatever the list says.
    this.coalesce = new Set(r.coalesce.methods.filter((m) => !never.has(m)));
    this.windowMs = r.coalesce.windowMs;
  }

  /** Nodes a call of `method` goes to at once (docs/routing.md "Broadcast sends"). */
  fanoutFor(method: string): number {
    return this.broadcast.has(method) ? this.fanout : 1;
  }

  /** The method's hedge plan, or null when it is not hedged. */
  hedgeFor(method: string): HedgePlan | null {
    return this.hedges.get(method) ?? null;
  }
}
