// How one call reaches nodes beyond the plain attempt-and-retry of call.ts, derived once from
// `routing.broadcast`, `routing.hedge` and `routing.coalesce` (docs/routing.md "Broadcast sends",
// "Hedged reads", "Coalescing") and swapped with the runtime on reload.

import type { Config } from '../config/schema.js';
import type { CallEvent } from '../metrics/recorder.js';
import type { CallSpec } from './call.js';
import { HedgePlan } from './hedge.js';

/** Where the call layer counts its routing events (the request recorder). */
export interface CallEvents {
  callEvent(kind: CallEvent): void;
}

/** Methods that change state: never hedged nor coalesced, whatever the lists say. */
const WRITES = ['sendTransaction', 'requestAirdrop', 'eth_sendRawTransaction', 'eth_sendTransaction'];

export class CallPolicy {
  /** Methods sent to `fanout` nodes at once. */
  readonly broadcast: ReadonlySet<string>;
  readonly fanout: number;
  private readonly hedges = new Map<string, HedgePlan>();
  /** Methods whose identical calls share one upstream call. */
  readonly coalesce: ReadonlySet<string>;
  readonly windowMs: number;

  constructor(
    config: Config,
    readonly events: CallEvents,
  ) {
    const r = config.routing;
    this.fanout = r.broadcast.fanout;
    this.broadcast = new Set(this.fanout > 1 ? r.broadcast.methods : []);
    const never = new Set([...r.noRetryMethods, ...r.broadcast.methods, ...WRITES]);
    // A method that must not run twice is never hedged, nor is a broadcast one (it already goes everywhere).
    for (const m of r.hedge.methods) if (!never.has(m)) this.hedges.set(m, new HedgePlan(m, r.hedge));
    // Writes never share a call: no-retry, broadcast and known write methods are left out whatever the list says.
    this.coalesce = new Set(r.coalesce.methods.filter((m) => !never.has(m)));
    this.windowMs = r.coalesce.windowMs;
  }

  /**
   * Fills the broadcast and hedge parts of a single request's spec. `defaultMode`: the client
   * asked for default routing (no key or node affinity); hedging needs it (and no automatic
   * affinity either: the call checks its slot).
   */
  fill(spec: CallSpec, method: string, defaultMode: boolean): void {
    spec.fanout = this.broadcast.has(method) ? this.fanout : 1;
    spec.hedge = defaultMode ? this.hedgeFor(method) : null;
    spec.events = this.events;
  }

  /** A sub-batch: one node, no hedge. */
  plain(spec: CallSpec): void {
    spec.fanout = 1;
    spec.hedge = null;
  }

  /** The method's hedge plan, or null when it is not hedged. */
  hedgeFor(method: string): HedgePlan | null {
    return this.hedges.get(method) ?? null;
  }
}
