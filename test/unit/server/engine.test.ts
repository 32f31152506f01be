// Which server engine serves (src/server/engine.ts, uws-binary.ts): the uWebSockets.js binary
// chosen by Node ABI and glibc, the fallback to Node's listener when none loads, and
// `rpc.server: uws` refused with the reason on such a runtime.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { effectiveChoice, engineFor, ServerChoiceError, uwsLoad } from '../../../src/server/engine.js';
import { currentRuntime, loadUws, UWS_BUILDS, type Runtime, type UwsBuild } from '../../../src/server/uws-binary.js';

const linux = (abi: number, glibc: string | null): Runtime => ({ platform: 'linux', arch: 'x64', abi, node: `x.${abi}`, glibc });

t.test('this runtime: auto serves uws exactly where a build carries its ABI and its glibc is new enough', async (t) => {
  const rt = currentRuntime();
  const fits = UWS_BUILDS.some((b) => b.abis.includes(rt.abi) && rt.platform === 'linux' && rt.arch === 'x64');
  const load = uwsLoad();
  t.equal(load.ok, fits && (rt.abi <= 127 || Number(rt.glibc?.split('.')[1] ?? 0) >= 38), load.reason);
  const engine = engineFor('auto', load);
  t.equal(engine.name, load.ok ? 'uws' : 'node');
  t.match(engine.reason, load.ok ? /^uWebSockets\.js from / : /^Node's http and ws, as no uWebSockets\.js binary/);
});

t.test('Node 26 (ABI 147): no build carries it; auto falls back to node, uws fails with the reason', async (t) => {
  const load = loadUws(linux(147, '2.41'));
  t.equal(load.ok, false);
  t.match(load.reason, /no uWebSockets\.js binary for Node\.js x\.147 \(ABI 147, linux x64, glibc 2\.41\)/);
  t.match(load.reason, /uws-pack 20\.0\.8 has no uws_linux_x64_147\.node \(it carries Node ABIs 108, 115, 120, 127\)/);
  t.match(load.reason, /@btc-vision\/uwebsockets\.js 20\.57\.0 has no uws_linux_x64_147\.node/);
  const engine = engineFor('auto', load);
  t.equal(engine.name, 'node');
  t.match(engine.reason, /ABI 147/);
  t.throws(() => engineFor('uws', load), ServerChoiceError);
  t.throws(() => engineFor('uws', load), /rpc\.server is uws, but no uWebSockets\.js binary .*set rpc\.server to auto or node/);
  t.equal(engineFor('node', load).name, 'node');
});

t.test('Node 24 (ABI 137): the glibc 2.38 build, only where glibc is 2.38 or later', async (t) => {
  const old = loadUws(linux(137, '2.36'));
  t.equal(old.ok, false);
  t.match(old.reason, /@btc-vision\/uwebsockets\.js 20\.57\.0 needs glibc 2\.38 or later, this system has 2\.36/);
  const musl = loadUws(linux(137, null));
  t.equal(musl.ok, false);
  t.match(musl.reason, /this system has no glibc/);
  // On this machine's glibc the 2.38 build cannot be loaded for real; that it is picked on a
  // new enough one shows in the reason of the file it then tries.
  const rt = currentRuntime();
  if (rt.glibc !== null && Number(rt.glibc.split('.')[1]) < 38) {
    const picked = loadUws(linux(137, '2.41'));
    t.equal(picked.ok, false, 'Node 20/22 cannot load an ABI 137 addon');
    t.match(picked.reason, /@btc-vision\/uwebsockets\.js 20\.57\.0's uws_linux_x64_137\.node does not load/);
  }
});

t.test('a binary that is there but does not load: the next build, then the fallback', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jg-uws-'));
  const rt = currentRuntime();
  writeFileSync(join(dir, `uws_${rt.platform}_${rt.arch}_${rt.abi}.node`), 'not a shared object');
  const broken: UwsBuild = { name: 'broken-uws', version: '0.0.0', dir: () => dir, abis: [rt.abi], minGlibc: [2, 0] };
  const missing: UwsBuild = { name: 'absent-uws', version: '0.0.0', dir: () => null, abis: [rt.abi], minGlibc: [2, 0] };
  const load = loadUws(rt, [missing, broken]);
  t.equal(load.ok, false);
  t.match(load.reason, /absent-uws 0\.0\.0 is not installed; broken-uws 0\.0\.0's uws_\w+\.node does not load/);
  t.equal(engineFor('auto', load).name, 'node', 'auto falls back to Node');
  t.throws(() => engineFor('uws', load), /rpc\.server is uws, but/);
});

t.test('JUMPGATE_SERVER stands in for auto only', async (t) => {
  t.equal(effectiveChoice('auto', undefined), 'auto');
  t.equal(effectiveChoice('auto', ''), 'auto');
  t.equal(effectiveChoice('auto', 'node'), 'node');
  t.equal(effectiveChoice('auto', 'uws'), 'uws');
  t.equal(effectiveChoice('uws', 'node'), 'uws', 'rpc.server set in the config wins');
  t.equal(effectiveChoice('node', 'uws'), 'node');
  t.throws(() => effectiveChoice('auto', 'nginx'), /JUMPGATE_SERVER must be uws, node or auto/);
});
