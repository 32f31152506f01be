// HTTP load against a JSON-RPC endpoint: open loop at a fixed rate (latency measured from
// each request's intended send time, so a stalled server is charged for every request it
// kept waiting: coordinated-omission correction) or closed loop at fixed concurrency.
//
// Cheap per request: one undici Pool driven through `dispatch` with a plain handler object
// (the legacy callbacks take raw headers, so nothing is parsed), one shared request body,
// one request object whose fields are all set in its constructor, an HDR histogram that
// records integers. The response body is only scanned for a JSON-RPC error member.

import { Pool } from 'undici';
import { LatencyHistogram, type LatencySummary } from '../../metrics/histogram.js';
import { LoadRequest, requestBody, socketErrorKind, type RequestOwner } from './http-request.js';
import { requestPath, type HttpBenchOptions } from './options.js';

/** Latency percentiles in milliseconds. */
export interface LatencyMs {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
}

export interface HttpLoadResult {
  kind: 'http';
  mode: 'open' | 'closed';
  /** The endpoint(s), space-separated. */
  url: string;
  method: string;
  batch: number;
  affinity: string | null;
  keys: number;
  connections: number;
  /** Target rate (open loop), else null. */
  rate: number | null;
  durationS: number;
  /** From the start of measurement to the last answer. */
  elapsedS: number;
  /** Requests sent while measuring (open loop: intended to be sent). */
  sent: number;
  /** Requests answered with HTTP 2xx and no JSON-RPC error. */
  ok: number;
  /** Requests that got an HTTP answer (any status). */
  answered: number;
  /** The same, warm-up included (what the target served while the generator ran). */
  allAnswered: number;
  errors: number;
  /** Errors by kind: "HTTP 503", "JSON-RPC -32005", "socket ECONNRESET", "timeout", … */
  errorKinds: Record<string, number>;
  /** Answered requests per second over elapsedS. */
  throughput: number;
  bytesIn: number;
  /** Open loop: from the intended send time; closed loop: from the send. */
  latencyMs: LatencyMs;
  /** Open loop only: from the actual send (what a naive client would report). */
  serviceMs: LatencyMs | null;
  /** CPU seconds this process (the generator) used so far, start-up and warm-up included. */
  clientCpuS: number;
  /** The latency histogram (µs), HdrHistogram compressed base64, for merging runs. */
  histogram: string;
}

/** What a progress display reads while the load runs. */
export interface HttpLive {
  phase: 'warmup' | 'measure' | 'drain' | 'done';
  /** ms since measuring started (negative during warm-up). */
  elapsedMs(): number;
  readonly durationMs: number;
  sent: number;
  answered: number;
  errors: number;
  p99Ms(): number;
  /** Stops sending now (Ctrl-C); answers still due are awaited and the result covers what ran. */
  stop(): void;
}

const NOT_SENT = 'not sent (max pending reached)';
const UNFINISHED = 'unfinished at end';

/** A histogram summary (µs) in milliseconds, with the mean from the sum of recorded µs. */
export function latencyMs(s: LatencySummary, sumUs: number): LatencyMs {
  return {
    count: s.count,
    mean: s.count === 0 ? 0 : sumUs / s.count / 1000,
    p50: s.p50 / 1000,
    p90: s.p90 / 1000,
    p99: s.p99 / 1000,
    p999: s.p999 / 1000,
    max: s.max / 1000,
  };
}

class HttpRun implements HttpLive, RequestOwner {
  phase: HttpLive['phase'] = 'warmup';
  sent = 0;
  answered = 0;
  allAnswered = 0;
  ok = 0;
  errors = 0;
  bytesIn = 0;
  sumUs = 0;
  serviceSumUs = 0;
  lastAnswer = 0;
  readonly kinds = new Map<string, number>();
  readonly hist = new LatencyHistogram({ digits: 3 });
  readonly service: LatencyHistogram | null;
  readonly pending = new Set<LoadRequest>();
  readonly pools: Pool[];
  readonly body: Buffer;
  readonly paths: string[];
  readonly baseHeaders: string[];
  readonly keyHeaders: string[][] | null;
  readonly keyHeader: string;
  readonly durationMs: number;
  /** Measurement starts here (performance.now() ms). */
  t0 = 0;
  tEnd = 0;
  next = 0;
  /** Open loop: requests in the whole schedule (warm-up included). */
  total = 0;
  /** Closed loop: resolves when the last loop finished. */
  private idle: (() => void) | null = null;

  constructor(readonly o: HttpBenchOptions) {
    this.durationMs = o.durationMs;
    this.service = o.mode === 'open' ? new LatencyHistogram({ digits: 3 }) : null;
    this.body = requestBody(o.method, o.params, o.batch);
    this.paths = o.urls.map((u) => requestPath(u, o.token, o.tokenIn));
    const b = o.brand.toLowerCase();
    const h = ['content-type', 'application/json'];
    if (o.token !== null && o.tokenIn === 'header') h.push(`x-${b}-api-token`, o.token);
    if (o.affinity !== null) h.push(`x-${b}-affinity`, o.affinity);
    for (const [k, v] of o.headers) h.push(k, v);
    this.baseHeaders = h;
    this.keyHeader = `x-${b}-affinity-key`;
    this.keyHeaders = o.affinity === 'key' && o.keys <= 100_000 ? Array.from({ length: o.keys }, (_, i) => [...h, this.keyHeader, 'key-' + i]) : null;
    // Each pool may open C connections; with C requests in flight in all, C are used in all.
    this.pools = o.urls.map(
      (u) =>
        new Pool(u.origin, {
          connections: o.connections,
          pipelining: 1,
          headersTimeout: o.timeoutMs,
          bodyTimeout: o.timeoutMs,
          keepAliveTimeout: 60_000,
          keepAliveMaxTimeout: 600_000,
          // Ignored for http:// origins.
          connect: { timeout: Math.min(o.timeoutMs, 10_000), rejectUnauthorized: !o.insecure },
        }),
    );
  }

  elapsedMs(): number {
    return performance.now() - this.t0;
  }

  stop(): void {
    this.tEnd = Math.min(this.tEnd, Math.max(this.t0, performance.now()));
    this.total = Math.min(this.total, this.next);
  }

  p99Ms(): number {
    return this.hist.percentile(99) / 1000;
  }

  private headersFor(i: number): string[] {
    if (this.o.affinity !== 'key') return this.baseHeaders;
    const k = i % this.o.keys;
    return this.keyHeaders !== null ? this.keyHeaders[k]! : [...this.baseHeaders, this.keyHeader, 'key-' + k];
  }

  send(i: number, intended: number, now: number): void {
    const measured = intended >= this.t0;
    const req = new LoadRequest(this, intended, now, measured);
    if (measured) this.sent++;
    this.pending.add(req);
    const k = this.pools.length === 1 ? 0 : i % this.pools.length;
    this.pools[k]!.dispatch({ path: this.paths[k]!, method: 'POST', headers: this.headersFor(i), body: this.body }, req);
  }

  count(kind: string): void {
    this.errors++;
    this.kinds.set(kind, (this.kinds.get(kind) ?? 0) + 1);
  }

  complete(req: LoadRequest): void {
    const now = performance.now();
    this.pending.delete(req);
    this.allAnswered++;
    if (req.measured) {
      const us = (now - req.intended) * 1000;
      this.hist.record(us);
      this.sumUs += us;
      if (this.service !== null) {
        const sus = (now - req.sentAt) * 1000;
        this.service.record(sus);
        this.serviceSumUs += sus;
      }
      this.answered++;
      this.bytesIn += req.bytes;
      this.lastAnswer = now;
      if (req.status < 200 || req.status >= 300) this.count('HTTP ' + req.status);
      else if (req.rpcError !== '') this.count(req.rpcError);
      else this.ok++;
    }
    this.after(now);
  }

  fail(req: LoadRequest, err: Error): void {
    this.pending.delete(req);
    if (req.measured) this.count(socketErrorKind(err));
    this.after(performance.now());
  }

  /** Closed loop: the connection that just finished sends its next request. */
  private after(now: number): void {
    // After the pools are gone a send would fail at once, and its failure send again.
    if (this.o.mode !== 'closed' || this.phase === 'done') return;
    if (now < this.tEnd) this.send(this.next++, now, now);
    else if (this.pending.size === 0) this.idle?.();
  }

  async runClosed(): Promise<void> {
    const start = performance.now();
    this.t0 = start + this.o.warmupMs;
    this.tEnd = this.t0 + this.o.durationMs;
    const done = new Promise<void>((resolve) => (this.idle = resolve));
    const phase = setInterval(() => this.setPhase(), 20);
    for (let c = 0; c < this.o.connections; c++) this.send(this.next++, start, start);
    // The drain's time limit counts from the end of the run, not its start (a run longer than the limit).
    await Promise.race([done, new Promise<void>((r) => setTimeout(r, Math.max(0, this.tEnd - performance.now())))]);
    await this.drainBy(done);
    clearInterval(phase);
  }

  private setPhase(): void {
    const now = performance.now();
    this.phase = now < this.t0 ? 'warmup' : now < this.tEnd ? 'measure' : 'drain';
  }

  async runOpen(): Promise<void> {
    const interval = 1000 / this.o.rate;
    const start = performance.now();
    this.t0 = start + this.o.warmupMs;
    this.tEnd = this.t0 + this.o.durationMs;
    this.total = Math.floor((this.o.warmupMs + this.o.durationMs) / interval);
    await new Promise<void>((resolve) => {
      const tick = (): void => {
        const now = performance.now();
        const due = Math.min(this.total, Math.floor((now - start) / interval) + 1);
        while (this.next < due) {
          const i = this.next++;
          const intended = start + i * interval;
          if (this.pending.size >= this.o.maxPending) {
            if (intended >= this.t0) {
              this.sent++;
              this.count(NOT_SENT);
            }
            continue;
          }
          this.send(i, intended, now);
        }
        this.setPhase();
        if (this.next >= this.total) return resolve();
        // Node's timers fire no sooner than 1 ms; lateness is charged to latency, honestly.
        setTimeout(tick, Math.max(0, start + this.next * interval - performance.now()));
      };
      tick();
    });
    this.phase = 'drain';
    let idle!: () => void;
    const done = new Promise<void>((resolve) => (idle = resolve));
    const poll = setInterval(() => this.pending.size === 0 && idle(), 5);
    await this.drainBy(done);
    clearInterval(poll);
  }

  /**
   * Waits for answers still due, up to the timeout (at most 10 s, at least 2 s). Requests
   * still open after that are recorded at their age so far (a lower bound) and counted.
   */
  private async drainBy(done: Promise<void>): Promise<void> {
    if (this.pending.size > 0 || this.o.mode === 'closed') {
      let timer: NodeJS.Timeout | undefined;
      const limit = Math.max(2000, Math.min(this.o.timeoutMs, 10_000));
      await Promise.race([done, new Promise<void>((r) => (timer = setTimeout(r, limit)))]);
      clearTimeout(timer);
    }
    const now = performance.now();
    for (const req of this.pending) {
      if (!req.measured) continue;
      this.hist.record((now - req.intended) * 1000);
      this.count(UNFINISHED);
    }
    this.pending.clear();
    this.phase = 'done';
    await Promise.all(this.pools.map((p) => p.destroy().catch(() => undefined)));
  }

  result(): HttpLoadResult {
    const o = this.o;
    const elapsed = Math.max(0.001, this.tEnd - this.t0, this.lastAnswer - this.t0) / 1000;
    const errorKinds: Record<string, number> = {};
    for (const [k, v] of [...this.kinds].sort((a, b) => b[1] - a[1])) errorKinds[k] = v;
    return {
      kind: 'http',
      mode: o.mode,
      url: o.urls.map((u) => u.href).join(' '),
      method: o.method,
      batch: o.batch,
      affinity: o.affinity,
      keys: o.keys,
      connections: o.connections,
      rate: o.mode === 'open' ? o.rate : null,
      durationS: (this.tEnd - this.t0) / 1000,
      elapsedS: elapsed,
      sent: this.sent,
      ok: this.ok,
      answered: this.answered,
      allAnswered: this.allAnswered,
      errors: this.errors,
      errorKinds,
      throughput: this.answered / elapsed,
      bytesIn: this.bytesIn,
      latencyMs: latencyMs(this.hist.summary(), this.sumUs),
      serviceMs: this.service === null ? null : latencyMs(this.service.summary(), this.serviceSumUs),
      clientCpuS: 0,
      histogram: this.hist.encode(),
    };
  }
}

/**
 * Runs one HTTP load. `onStart` receives the live counters (for a progress display) before
 * the first request goes out.
 */
export async function runHttpLoad(o: HttpBenchOptions, onStart?: (live: HttpLive) => void): Promise<HttpLoadResult> {
  const run = new HttpRun(o);
  onStart?.(run);
  if (o.mode === 'closed') await run.runClosed();
  else await run.runOpen();
  const cpu = process.cpuUsage();
  return { ...run.result(), clientCpuS: (cpu.user + cpu.system) / 1e6 };
}
