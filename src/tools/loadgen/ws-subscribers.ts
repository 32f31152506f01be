// A group of WebSocket subscribers in one process: connects N clients (a bounded number at
// a time), each sends one subscribe call and waits for its answer, then records when every
// notification arrives. A notification is identified by its `result` text (the part after
// `"result":`, without the per-client subscription id), so the same slot seen by different
// clients, through different paths, is the same notification.
//
// Times are on one clock shared by every process of the machine (CLOCK_MONOTONIC, which both
// process.hrtime and performance.now read), so groups in child processes can be merged.
//
// A group records from its first subscription on, not from the moment it is told to: a child
// process that is slow to read "start measuring" (a busy machine) would otherwise miss the
// first notifications of the window while other processes saw them, and report clients as
// missing slots they got. What the window keeps is decided by time, in the parent.

import { connectWs, WsConnectError, type RawWebSocket } from './ws-client.js';

/** performance.now() plus this = monotonic ms, the same in every process. */
const CLOCK_OFFSET = Number(process.hrtime.bigint()) / 1e6 - performance.now();

export function monoNow(): number {
  return performance.now() + CLOCK_OFFSET;
}

export interface GroupSpec {
  /** Clients go round-robin over these. */
  urls: string[];
  headers: [string, string][];
  /** The subscribe call to send, as JSON text. */
  subscribe: string;
  timeoutMs: number;
  /** wss:// without verifying the server's certificate (--insecure). */
  insecure: boolean;
}

/** Arrivals recorded by one group: for each notification key, the monotonic ms of each arrival. */
export interface Arrivals {
  keys: string[];
  times: number[][];
}

export interface GroupCounts {
  connected: number;
  subscribed: number;
  failed: number;
  failKinds: Record<string, number>;
  /** Clients closed by the server (or the network) after subscribing. */
  closed: number;
  closeKinds: Record<string, number>;
}

const PARAMS = Buffer.from('"params"');
const RESULT = Buffer.from('"result":');
const SUBSCRIPTION = Buffer.from(',"subscription"');
const ERROR = Buffer.from('"error"');

function bump(m: Record<string, number>, k: string): void {
  m[k] = (m[k] ?? 0) + 1;
}

/** The notification's identity, or null when the frame is not a notification. */
export function notificationKey(frame: Buffer): string | null {
  const p = frame.indexOf(PARAMS);
  if (p < 0) return null;
  const r = frame.indexOf(RESULT, p);
  if (r < 0) return null;
  const start = r + RESULT.length;
  const s = frame.indexOf(SUBSCRIPTION, start);
  return frame.toString('latin1', start, s < 0 ? frame.length : s);
}

export class SubscriberGroup {
  readonly counts: GroupCounts = { connected: 0, subscribed: 0, failed: 0, failKinds: {}, closed: 0, closeKinds: {} };
  private readonly sockets: RawWebSocket[] = [];
  private closing = false;
  /** Until the measurement starts, arrivals older than this long only mark their key. */
  private static readonly KEEP_BEFORE_MS = 10_000;
  private measuring = false;
  private byKey = new Map<string, number[]>();
  /** Arrivals recorded since the measurement started (or since the first subscription). */
  arrivals = 0;

  constructor(private readonly spec: GroupSpec) {}

  /**
   * Opens `n` clients, `concurrency` at a time; resolves when each subscribed or failed.
   * `first` is the first client's index over all groups, so that groups in several
   * processes spread their clients over the URLs as one group would.
   */
  async connect(n: number, first = 0, concurrency = 200): Promise<void> {
    const urls = this.spec.urls.map((u) => new URL(u));
    let next = 0;
    const one = async (): Promise<void> => {
      while (next < n) {
        const url = urls[(first + next) % urls.length]!;
        next++;
        await this.open(url);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, n) }, one));
  }

  private open(url: URL): Promise<void> {
    return new Promise<void>((resolve) => {
      let answered = false;
      let timer: NodeJS.Timeout | undefined;
      const settle = (kind: string | null): void => {
        if (answered) return;
        answered = true;
        clearTimeout(timer);
        if (kind === null) this.counts.subscribed++;
        else {
          this.counts.failed++;
          bump(this.counts.failKinds, kind);
        }
        resolve();
      };
      connectWs(
        url,
        this.spec.headers,
        {
          message: (data, at) => {
            if (!answered) {
              // The subscribe call's answer (a notification cannot come before it).
              const e = data.indexOf(ERROR);
              if (e < 0) return settle(null);
              const code = /"code"\s*:\s*(-?\d+)/.exec(data.toString('latin1', e, e + 80))?.[1];
              return settle('JSON-RPC ' + (code ?? '?'));
            }
            const key = notificationKey(data);
            if (key === null) return;
            const t = at + CLOCK_OFFSET;
            const list = this.byKey.get(key);
            if (list === undefined) {
              if (!this.measuring) this.forgetBefore(t - SubscriberGroup.KEEP_BEFORE_MS);
              this.byKey.set(key, [t]);
            } else list.push(t);
            this.arrivals++;
          },
          close: (code) => {
            if (!answered) return settle('closed ' + code);
            if (this.closing) return;
            this.counts.closed++;
            bump(this.counts.closeKinds, 'closed ' + code);
          },
        },
        this.spec.timeoutMs,
        this.spec.insecure,
      ).then(
        (ws) => {
          this.counts.connected++;
          this.sockets.push(ws);
          ws.send(this.spec.subscribe);
          timer = setTimeout(() => settle('no answer to subscribe'), this.spec.timeoutMs);
        },
        (e: Error) => settle(e instanceof WsConnectError ? e.kind : 'socket ' + e.message),
      );
    });
  }

  /**
   * Keeps memory bounded while nothing is measured, and drops what the window cannot count:
   * a notification that arrived here before `from` is not in the window (its earliest arrival
   * is earlier), so one arrival time stands for all of them. Keys are kept, so that other
   * processes' later arrivals of the same notification are not counted either.
   */
  private forgetBefore(from: number): void {
    // A key's times are in arrival order: the first is its earliest here.
    for (const [k, times] of this.byKey) if (times[0]! < from && times.length > 1) this.byKey.set(k, [times[0]!]);
  }

  /** The measurement starts at `from` (monotonic ms): arrivals before it only mark their key. */
  startRecording(from: number): void {
    this.forgetBefore(from);
    this.measuring = true;
    this.arrivals = 0;
  }

  /** Everything recorded: the caller keeps the notifications whose earliest arrival is in its window. */
  stopRecording(): Arrivals {
    const keys = [...this.byKey.keys()];
    const out = { keys, times: keys.map((k) => this.byKey.get(k)!) };
    this.byKey = new Map();
    return out;
  }

  /** Closes every client (1000) and waits a moment for the closes to go out. */
  async close(): Promise<void> {
    this.closing = true;
    for (const s of this.sockets) s.close(1000);
    this.sockets.length = 0;
    await new Promise((r) => setTimeout(r, 100));
  }
}
