// How `jumpgate bench` shows its results: a text table, JSON, and progress on stderr while
// it runs (one line rewritten in place on a terminal, a line every few seconds otherwise).

import type { HttpLive, HttpLoadResult, LatencyMs } from './http-load.js';
import type { WsLive, WsLoadResult } from './ws-load.js';

const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function fmtInt(n: number): string {
  return int.format(n);
}

/** Milliseconds with 2 decimals below 10, 1 below 1000, none above. */
export function fmtMs(v: number): string {
  if (!Number.isFinite(v)) return '-';
  return v < 10 ? v.toFixed(2) : v < 1000 ? v.toFixed(1) : fmtInt(v);
}

/** Aligns rows into columns (first column left, the rest right). */
export function textTable(rows: string[][]): string {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function latencyRow(label: string, l: LatencyMs): string[] {
  return [label, fmtMs(l.p50), fmtMs(l.p90), fmtMs(l.p99), fmtMs(l.p999), fmtMs(l.max), fmtMs(l.mean)];
}

function kinds(k: Record<string, number>): string[] {
  return Object.entries(k).map(([name, n]) => `  ${name}: ${fmtInt(n)}`);
}

export function httpTable(r: HttpLoadResult): string {
  const what = r.batch > 0 ? `batch of ${r.batch} × ${r.method}` : r.method;
  const affinity = r.affinity === null ? '' : `, affinity ${r.affinity}${r.affinity === 'key' ? ` over ${fmtInt(r.keys)} keys` : ''}`;
  const head =
    r.mode === 'open'
      ? `open loop at ${fmtInt(r.rate!)} req/s, ${r.connections} connections, ${+r.durationS.toFixed(2)} s, ${what}${affinity}`
      : `closed loop, ${r.connections} connections, ${+r.durationS.toFixed(2)} s, ${what}${affinity}`;
  const lines = [
    `${r.url}: ${head}`,
    '',
    textTable([
      ['requests', 'sent', 'answered', 'ok', 'errors', 'req/s', 'MB/s in'],
      ['', fmtInt(r.sent), fmtInt(r.answered), fmtInt(r.ok), fmtInt(r.errors), fmtInt(r.throughput), (r.bytesIn / r.elapsedS / 1e6).toFixed(1)],
    ]),
    '',
    textTable([
      ['latency ms', 'p50', 'p90', 'p99', 'p99.9', 'max', 'mean'],
      latencyRow(r.mode === 'open' ? 'from intended send' : 'from send', r.latencyMs),
      ...(r.serviceMs === null ? [] : [latencyRow('from actual send', r.serviceMs)]),
    ]),
  ];
  if (r.errors > 0) lines.push('', 'errors by kind:', ...kinds(r.errorKinds));
  return lines.join('\n');
}

export function wsTable(r: WsLoadResult): string {
  const lines = [
    `${r.url}: ${fmtInt(r.subscribers)} × ${r.method}${r.procs > 1 ? ` over ${r.procs} processes` : ''}, ${+r.durationS.toFixed(2)} s${r.references.length > 0 ? `, references ${r.references.join(' ')}` : ''}`,
    '',
    textTable([
      ['clients', 'subscribed', 'failed', 'closed', 'connect s', 'notifications', 'arrivals', 'missing'],
      ['', fmtInt(r.subscribed), fmtInt(r.failed), fmtInt(r.closed), r.connectS.toFixed(1), fmtInt(r.notifications), fmtInt(r.arrivals), fmtInt(r.missing)],
    ]),
    '',
    textTable([
      ['delay ms', 'p50', 'p90', 'p99', 'p99.9', 'max', 'mean'],
      latencyRow('over earliest arrival', r.delayMs),
      ...(r.overReferenceMs === null ? [] : [latencyRow('over the reference', r.overReferenceMs)]),
    ]),
  ];
  if (r.failed > 0) lines.push('', 'failed subscriptions by kind:', ...kinds(r.failKinds));
  if (r.closed > 0) lines.push('', 'closed while measuring:', ...kinds(r.closeKinds));
  return lines.join('\n');
}

export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface Progress {
  stop(): void;
}

/** Progress on `out` (stderr): in place on a TTY every 250 ms, else a line every 2 s. */
export function progress(out: ProgressStream, line: () => string): Progress {
  const tty = out.isTTY === true;
  const timer = setInterval(() => out.write(tty ? `\r${line()}\x1b[K` : line() + '\n'), tty ? 250 : 2000);
  return {
    stop() {
      clearInterval(timer);
      if (tty) out.write('\r\x1b[K');
    },
  };
}

export function httpProgressLine(live: HttpLive): () => string {
  let lastAnswered = 0;
  let lastAt = performance.now();
  return () => {
    const now = performance.now();
    const rate = ((live.answered - lastAnswered) * 1000) / Math.max(1, now - lastAt);
    lastAnswered = live.answered;
    lastAt = now;
    const t = live.elapsedMs() / 1000;
    const clock =
      live.phase === 'warmup'
        ? `warm-up ${(-t).toFixed(1)} s left`
        : live.phase === 'measure'
          ? `${t.toFixed(1)}/${(live.durationMs / 1000).toFixed(0)} s`
          : 'draining';
    return `bench ${clock}  sent ${fmtInt(live.sent)}  answered ${fmtInt(live.answered)}  ${fmtInt(rate)} req/s  p99 ${fmtMs(live.p99Ms())} ms  errors ${fmtInt(live.errors)}`;
  };
}

export function wsProgressLine(live: WsLive): () => string {
  return () => {
    if (live.phase === 'connect') return `bench connecting: ${fmtInt(live.subscribed)}/${fmtInt(live.total)} subscribed, ${fmtInt(live.failed)} failed`;
    const t = Math.max(0, live.elapsedMs() / 1000);
    return `bench ${live.phase === 'measure' ? `${Math.min(t, live.durationMs / 1000).toFixed(1)}/${(live.durationMs / 1000).toFixed(0)} s` : 'finishing'}  ${fmtInt(live.subscribed)} subscribed  ${fmtInt(live.arrivals)} notifications received`;
  };
}
