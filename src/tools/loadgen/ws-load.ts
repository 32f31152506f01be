// WebSocket notification delay: N subscribers (optionally spread over child processes) and
// optional reference clients subscribed straight to a node. The delay of one arrival is its
// time minus the earliest arrival of the same notification anywhere (every subscriber and
// every reference), so it measures the spread a proxy adds, including its fan-out order.
//
// Timeline: connect everything; record for grace + duration + grace; count only the
// notifications whose earliest arrival falls in the middle `duration`, so none is cut off
// at either edge.

import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { LatencyHistogram } from '../../metrics/histogram.js';
import { latencyMs, type LatencyMs } from './http-load.js';
import { requestPath, type WsBenchOptions } from './options.js';
import type { FromChild, ToChild } from './ws-child.js';
import { monoNow, SubscriberGroup, type Arrivals, type GroupCounts, type GroupSpec } from './ws-subscribers.js';

export interface WsLoadResult extends Omit<GroupCounts, 'connected'> {
  kind: 'ws';
  /** The endpoint(s), space-separated. */
  url: string;
  method: string;
  subscribers: number;
  procs: number;
  references: string[];
  /** Seconds to connect and subscribe every client. */
  connectS: number;
  durationS: number;
  /** Distinct notifications whose earliest arrival fell in the measured window. */
  notifications: number;
  /** Their arrivals at subscribers (references not counted). */
  arrivals: number;
  /** notifications × subscribed − arrivals (never negative). */
  missing: number;
  /** Arrival − earliest arrival of the same notification (subscribers and references). */
  delayMs: LatencyMs;
  /** Arrival − the references' earliest arrival; null without --ws-reference. */
  overReferenceMs: LatencyMs | null;
  /** delayMs as an HdrHistogram (µs), compressed base64. */
  histogram: string;
}

export interface WsLive {
  phase: 'connect' | 'measure' | 'drain' | 'done';
  readonly total: number;
  connected: number;
  subscribed: number;
  failed: number;
  arrivals: number;
  readonly durationMs: number;
  /** ms since measuring started (0 before). */
  elapsedMs(): number;
}

export interface WsHooks {
  onStart?(live: WsLive): void;
  /** Called (not awaited) when every client is subscribed and recording starts. */
  onMeasuring?(): void;
  /** Awaited after recording, before the clients close (e.g. to read a proxy's memory). */
  beforeClose?(): Promise<void> | void;
}

function wsUrl(u: URL): URL {
  const out = new URL(u.href);
  if (out.protocol === 'http:') out.protocol = 'ws:';
  else if (out.protocol === 'https:') out.protocol = 'wss:';
  return out;
}

function addCounts(into: GroupCounts, c: GroupCounts): void {
  into.connected += c.connected;
  into.subscribed += c.subscribed;
  into.failed += c.failed;
  into.closed += c.closed;
  for (const [k, v] of Object.entries(c.failKinds)) into.failKinds[k] = (into.failKinds[k] ?? 0) + v;
  for (const [k, v] of Object.entries(c.closeKinds)) into.closeKinds[k] = (into.closeKinds[k] ?? 0) + v;
}

/** The subscribers, in this process or in children, behind one interface. */
interface Holder {
  connect(): Promise<GroupCounts>;
  /** The window starts at `from` (monotonic ms). */
  record(from: number): void;
  stop(): Promise<{ arrivals: Arrivals; counts: GroupCounts }>;
  close(): Promise<void>;
}

function localHolder(spec: GroupSpec, count: number, live: WsLive): Holder {
  const g = new SubscriberGroup(spec);
  const poll = setInterval(() => {
    live.connected = g.counts.connected;
    live.subscribed = g.counts.subscribed;
    live.failed = g.counts.failed;
    live.arrivals = g.arrivals;
  }, 100);
  return {
    connect: async () => {
      await g.connect(count);
      return g.counts;
    },
    record: (from) => g.startRecording(from),
    stop: () => Promise.resolve({ arrivals: g.stopRecording(), counts: g.counts }),
    close: async () => {
      clearInterval(poll);
      await g.close();
    },
  };
}

function childHolder(spec: GroupSpec, shares: number[], live: WsLive): Holder {
  const file = fileURLToPath(new URL('./ws-child.js', import.meta.url));
  const kids: ChildProcess[] = shares.map(() => fork(file, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  const latest = kids.map(() => ({ connected: 0, subscribed: 0, failed: 0, arrivals: 0 }));
  const update = (): void => {
    live.connected = latest.reduce((a, l) => a + l.connected, 0);
    live.subscribed = latest.reduce((a, l) => a + l.subscribed, 0);
    live.failed = latest.reduce((a, l) => a + l.failed, 0);
    live.arrivals = latest.reduce((a, l) => a + l.arrivals, 0);
  };
  const next = <T extends FromChild['type']>(kid: ChildProcess, type: T): Promise<Extract<FromChild, { type: T }>> =>
    new Promise((resolve, reject) => {
      const on = (m: FromChild): void => {
        if (m.type !== type) return;
        kid.off('message', on);
        kid.off('exit', onExit);
        resolve(m as Extract<FromChild, { type: T }>);
      };
      const onExit = (code: number | null): void => reject(new Error(`WebSocket client process exited (${code}) while waiting for "${type}"`));
      kid.on('message', on);
      kid.once('exit', onExit);
    });
  kids.forEach((kid, i) =>
    kid.on('message', (m: FromChild) => {
      if (m.type === 'progress') {
        latest[i] = m;
        update();
      }
    }),
  );
  const tell = (kid: ChildProcess, m: ToChild): void => {
    if (kid.connected) kid.send(m);
  };
  return {
    connect: async () => {
      const ready = kids.map((k) => next(k, 'ready'));
      kids.forEach((k, i) => tell(k, { type: 'connect', spec, count: shares[i]!, first: shares.slice(0, i).reduce((a, b) => a + b, 0) }));
      const total: GroupCounts = { connected: 0, subscribed: 0, failed: 0, failKinds: {}, closed: 0, closeKinds: {} };
      for (const r of await Promise.all(ready)) addCounts(total, r.counts);
      return total;
    },
    record: (from) => kids.forEach((k) => tell(k, { type: 'record', from })),
    stop: async () => {
      const got = kids.map((k) => next(k, 'arrivals'));
      kids.forEach((k) => tell(k, { type: 'stop' }));
      const all = await Promise.all(got);
      const counts: GroupCounts = { connected: 0, subscribed: 0, failed: 0, failKinds: {}, closed: 0, closeKinds: {} };
      const keys: string[] = [];
      const times: number[][] = [];
      for (const a of all) {
        addCounts(counts, a.counts);
        keys.push(...a.keys);
        times.push(...a.times);
      }
      return { arrivals: { keys, times }, counts };
    },
    close: async () => {
      await Promise.all(
        kids.map(async (k) => {
          if (k.exitCode !== null) return;
          const gone = new Promise((r) => k.once('exit', r));
          tell(k, { type: 'close' });
          const t = setTimeout(() => k.kill('SIGKILL'), 5000);
          await gone;
          clearTimeout(t);
        }),
      );
    },
  };
}

export interface WindowTally {
  /** Notifications whose earliest arrival (over references and subscribers) is in the window. */
  notifications: number;
  /** Subscribers' arrivals of those notifications. */
  arrivals: number;
  delayMs: LatencyMs;
  overReferenceMs: LatencyMs | null;
  histogram: string;
}

/**
 * The window's notifications and each subscriber arrival's delay over the earliest arrival of
 * the same notification (and over the earliest reference's). A notification belongs to the
 * window by its earliest arrival over every path: a subscriber may get it before a reference.
 */
export function tallyWindow(refArrivals: Arrivals[], arrivals: Arrivals, windowStart: number, windowEnd: number): WindowTally {
  // Earliest arrival per notification: over references first, then subscribers.
  const refFirst = new Map<string, number>();
  for (const a of refArrivals) a.keys.forEach((k, i) => refFirst.set(k, Math.min(refFirst.get(k) ?? Infinity, ...a.times[i]!)));
  const first = new Map(refFirst);
  arrivals.keys.forEach((k, i) => {
    let m = first.get(k) ?? Infinity;
    for (const t of arrivals.times[i]!) if (t < m) m = t;
    first.set(k, m);
  });
  const delay = new LatencyHistogram({ digits: 3 });
  const over = new LatencyHistogram({ digits: 3 });
  let delaySum = 0;
  let overSum = 0;
  let n = 0;
  const counted = new Set<string>();
  arrivals.keys.forEach((k, i) => {
    const f = first.get(k)!;
    if (f < windowStart || f > windowEnd) return;
    counted.add(k);
    const r = refFirst.get(k);
    for (const t of arrivals.times[i]!) {
      const d = (t - f) * 1000;
      delay.record(d);
      delaySum += d;
      n++;
      if (r !== undefined) {
        const od = Math.max(0, t - r) * 1000;
        over.record(od);
        overSum += od;
      }
    }
  });
  // Notifications no subscriber got in the window count too (they are the missing ones), by
  // the same earliest arrival: not by the reference's own, which may come after a subscriber's.
  for (const k of refFirst.keys()) {
    const f = first.get(k)!;
    if (f >= windowStart && f <= windowEnd) counted.add(k);
  }
  return {
    notifications: counted.size,
    arrivals: n,
    delayMs: latencyMs(delay.summary(), delaySum),
    overReferenceMs: refArrivals.length === 0 ? null : latencyMs(over.summary(), overSum),
    histogram: delay.encode(),
  };
}

export async function runWsLoad(o: WsBenchOptions, hooks: WsHooks = {}): Promise<WsLoadResult> {
  const GRACE_MS = o.graceMs;
  const urls = o.urls.map((u) => {
    const out = wsUrl(u);
    out.pathname = requestPath(out, o.token, o.tokenIn, true).split('?')[0]!;
    return out.href;
  });
  const headers: [string, string][] = [...o.headers];
  if (o.token !== null && o.tokenIn === 'header') headers.push([`X-${o.brand}-Api-Token`, o.token]);
  const subscribe = `{"jsonrpc":"2.0","id":1,"method":${JSON.stringify(o.method)}${o.params === null ? '' : `,"params":${o.params}`}}`;
  const spec: GroupSpec = { urls, headers, subscribe, timeoutMs: o.timeoutMs, insecure: o.insecure };

  let measureStart = 0;
  const live: WsLive = {
    phase: 'connect',
    total: o.subscribers,
    connected: 0,
    subscribed: 0,
    failed: 0,
    arrivals: 0,
    durationMs: o.durationMs,
    elapsedMs: () => (measureStart === 0 ? 0 : performance.now() - measureStart - GRACE_MS),
  };
  hooks.onStart?.(live);

  const refs = o.references.map(
    (r) => new SubscriberGroup({ urls: [wsUrl(r).href], headers: o.headers, subscribe, timeoutMs: o.timeoutMs, insecure: o.insecure }),
  );
  const failKinds: Record<string, number> = {};
  for (const g of refs) {
    await g.connect(1);
    for (const [k, v] of Object.entries(g.counts.failKinds)) failKinds['reference: ' + k] = (failKinds['reference: ' + k] ?? 0) + v;
  }

  const shares = Array.from({ length: o.procs }, (_, i) => Math.floor(o.subscribers / o.procs) + (i < o.subscribers % o.procs ? 1 : 0));
  const holder = o.procs === 1 ? localHolder(spec, o.subscribers, live) : childHolder(spec, shares, live);
  let result: WsLoadResult;
  try {
    const t0 = performance.now();
    const counts = await holder.connect();
    const connectS = (performance.now() - t0) / 1000;
    live.subscribed = counts.subscribed;
    live.phase = 'measure';
    // Nobody to measure: skip the wait.
    const nothing = counts.subscribed === 0;
    measureStart = performance.now();
    const windowStart = monoNow() + GRACE_MS;
    for (const g of refs) g.startRecording(windowStart);
    holder.record(windowStart);
    const windowEnd = windowStart + o.durationMs;
    hooks.onMeasuring?.();
    if (!nothing) await new Promise((r) => setTimeout(r, GRACE_MS + o.durationMs));
    live.phase = 'drain';
    if (!nothing) await new Promise((r) => setTimeout(r, GRACE_MS));
    const refArrivals = refs.map((g) => g.stopRecording());
    const { arrivals, counts: after } = await holder.stop();
    live.phase = 'done';
    await hooks.beforeClose?.();

    const w = tallyWindow(refArrivals, arrivals, windowStart, windowEnd);
    for (const [k, v] of Object.entries(counts.failKinds)) failKinds[k] = (failKinds[k] ?? 0) + v;
    result = {
      kind: 'ws',
      url: o.urls.map((u) => u.href).join(' '),
      method: o.method,
      subscribers: o.subscribers,
      procs: o.procs,
      references: o.references.map((r) => r.href),
      connectS,
      subscribed: counts.subscribed,
      failed: counts.failed,
      failKinds,
      closed: after.closed,
      closeKinds: after.closeKinds,
      durationS: o.durationMs / 1000,
      notifications: w.notifications,
      arrivals: w.arrivals,
      missing: Math.max(0, w.notifications * counts.subscribed - w.arrivals),
      delayMs: w.delayMs,
      overReferenceMs: w.overReferenceMs,
      histogram: w.histogram,
    };
  } finally {
    await holder.close();
    for (const g of refs) await g.close();
  }
  return result;
}
