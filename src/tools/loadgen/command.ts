// The load generator as a command: flags in, progress on stderr, the result table (or JSON)
// on stdout. `jumpgate bench` runs it (src/cli/bench.ts), and so does main.ts beside this file
// for scripts that start the generator alone. Returns the exit status: 0 done, 1 no request
// (or subscription) succeeded, 2 bad flags (the message names the flag).

import { runHttpLoad } from './http-load.js';
import { BENCH_USAGE, BenchUsageError, parseBenchArgs } from './options.js';
import { httpProgressLine, httpTable, progress, wsProgressLine, wsTable, type Progress, type ProgressStream } from './report.js';
import { runWsLoad } from './ws-load.js';

/** Where output goes; stderr gets progress (in place when isTTY) and usage errors. */
export interface BenchIo {
  out: (text: string) => void;
  err: ProgressStream;
}

const defaultIo: BenchIo = { out: (t) => process.stdout.write(t), err: process.stderr };

export async function runBench(argv: string[], io: BenchIo = defaultIo): Promise<number> {
  let opts;
  try {
    opts = parseBenchArgs(argv);
  } catch (e) {
    if (!(e instanceof BenchUsageError)) throw e;
    io.err.write(`jumpgate bench: ${e.message}\n\n${BENCH_USAGE}\n`);
    return 2;
  }
  if (opts.kind === 'help') {
    io.out(BENCH_USAGE + '\n');
    return 0;
  }
  let shown: Progress | null = null;
  try {
    if (opts.kind === 'http') {
      let stop: (() => void) | null = null;
      const r = await runHttpLoad(opts.http, (live) => {
        if (!opts.quiet) shown = progress(io.err, httpProgressLine(live));
        // Ctrl-C ends the run early and still reports what was measured.
        stop = () => live.stop();
        process.once('SIGINT', stop);
      }).finally(() => stop !== null && process.removeListener('SIGINT', stop));
      io.out((opts.json ? JSON.stringify(r) : httpTable(r)) + '\n');
      return r.ok > 0 ? 0 : 1;
    }
    const r = await runWsLoad(opts.ws, {
      onStart: (live) => {
        if (!opts.quiet) shown = progress(io.err, wsProgressLine(live));
      },
      onMeasuring: () => {
        // A marker for scripts (the scenario runner) waiting for every client to be in.
        if (!opts.quiet && io.err.isTTY !== true) io.err.write('bench: all clients subscribed, measuring\n');
      },
    });
    io.out((opts.json ? JSON.stringify(r) : wsTable(r)) + '\n');
    return r.subscribed > 0 ? 0 : 1;
  } finally {
    (shown as Progress | null)?.stop();
  }
}
