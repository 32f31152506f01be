// The per-request classes keep one V8 map (hidden class) whatever path a request takes:
// single or batch, HTTP or WebSocket, answered or failed (README "Architecture": every field is
// set in the constructor). %HaveSameMap needs --allow-natives-syntax, so the instances are
// made and compared in a child process (shapes-probe.ts).

import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';

const PROBE = fileURLToPath(new URL('./shapes-probe.js', import.meta.url));

t.test('Exchange, its responders, UpstreamCall, Attempt and the serving objects each keep one map', async (t) => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--allow-natives-syntax', PROBE], { timeout: 60_000 });
  const checks = JSON.parse(stdout) as { kind: string; path: string; vs: string; same: boolean }[];
  for (const kind of ['Exchange', 'HttpResponder', 'WsResponder', 'UpstreamCall', 'Attempt', 'Settings', 'RequestState', 'Services', 'Serving']) {
    t.ok(
      checks.some((c) => c.kind === kind),
      `${kind} instances compared`,
    );
  }
  t.ok(checks.length > 30, `${checks.length} comparisons`);
  for (const c of checks) t.ok(c.same, c.kind === 'probe' ? c.path : `${c.kind}: ${c.path} has the map of ${c.vs}`);
});
