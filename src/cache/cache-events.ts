// What the control plane's cache feed tells each data plane's account store (src/grpc/cache-feed.ts
// decides, every store applies the same events in the same order, so every replica answers the
// same). Plain data: with worker threads the events cross by structured clone, which turns a
// Buffer into a Uint8Array; `applyEvents` turns it back without a copy.

import type { AccountStore } from './account-store.js';
import type { AccountState } from './account-value.js';

export const EV_WRITE = 0;
export const EV_SLOT = 1;
export const EV_TRACK = 2;
export const EV_ANCHOR = 3;
export const EV_UNHOLD = 4;
export const EV_UNTRACK = 5;

export type SlotStatusName = 'processed' | 'confirmed' | 'finalized' | 'dead';

export type CacheEvent =
  | { t: typeof EV_WRITE; key: string; slot: number; wv: number; state: AccountState }
  /** `at`: when the status first arrived from a source (performance.timeOrigin + now(), comparable across threads). */
  | { t: typeof EV_SLOT; slot: number; parent: number; status: SlotStatusName; at: number }
  | { t: typeof EV_TRACK; key: string; from: number }
  /** `apiVersion`: the node's, as its answers print it (the cache's answers print the same). */
  | { t: typeof EV_ANCHOR; key: string; slot: number; state: AccountState; apiVersion: string }
  /** key '' = every key (a source gap). */
  | { t: typeof EV_UNHOLD; key: string }
  | { t: typeof EV_UNTRACK; key: string };

function own(state: AccountState): AccountState {
  if (state === null || Buffer.isBuffer(state.data)) return state;
  const d = state.data as Uint8Array;
  return { ...state, data: Buffer.from(d.buffer, d.byteOffset, d.byteLength) };
}

/** Applies events in order; answers the last anchor's apiVersion seen ('' when none). */
export function applyEvents(store: AccountStore, events: readonly CacheEvent[]): string {
  let apiVersion = '';
  for (const e of events) {
    switch (e.t) {
      case EV_WRITE:
        store.write(e.key, e.slot, e.wv, own(e.state));
        break;
      case EV_SLOT:
        store.slotStatus(e.slot, e.parent < 0 ? null : e.parent, e.status);
        break;
      case EV_TRACK:
        store.track(e.key, e.from);
        break;
      case EV_ANCHOR:
        store.anchor(e.key, e.slot, own(e.state));
        apiVersion = e.apiVersion;
        break;
      case EV_UNHOLD:
        if (e.key === '') store.unholdAll();
        else store.unhold(e.key);
        break;
      case EV_UNTRACK:
        store.untrack(e.key);
        break;
    }
  }
  return apiVersion;
}
