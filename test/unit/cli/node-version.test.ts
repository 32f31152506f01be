// The start-up runtime check (src/cli/node-version.ts): Node.js 22, 24 and 26 run; 20.19+ runs
// with an end-of-life warning; others get one line naming the supported versions and what to
// do; package.json's engines agrees.

import { readFileSync } from 'node:fs';
import t from 'tap';
import { endOfLifeWarning, SUPPORTED, unsupportedNode } from '../../../src/cli/node-version.js';

t.test('supported majors pass, others get one line naming the supported versions', async (t) => {
  for (const v of ['22.0.0', '22.23.3', '24.11.0', '26.12.1']) {
    t.equal(unsupportedNode(v), null, v);
    t.equal(endOfLifeWarning(v), null, `${v}: no warning`);
  }
  for (const v of ['18.20.4', '20.8.1', '21.7.3', '23.0.0', '25.1.0', '27.0.0']) {
    const line = unsupportedNode(v);
    t.type(line, 'string', v);
    t.notMatch(line!, /\n/, 'one line');
    t.match(line!, new RegExp(`Node\\.js ${v.replace(/\./g, '\\.')} is not supported`));
    t.match(line!, /Node\.js 22, 24, 26/);
    t.match(line!, /install one of those/);
  }
  t.equal(unsupportedNode(process.versions.node), null, 'the Node.js running this test runs jumpgate');
});

t.test('Node 20.19 and later runs, with a one-line end-of-life warning', async (t) => {
  for (const v of ['20.19.0', '20.20.2']) {
    t.equal(unsupportedNode(v), null, v);
    const w = endOfLifeWarning(v);
    t.type(w, 'string', v);
    t.notMatch(w!, /\n/, 'one line');
    t.match(w!, /end of life on 2026-04-30/);
    t.match(w!, /supported on Node\.js 22, 24, 26/);
  }
});

t.test('package.json engines names the supported versions', async (t) => {
  const pkg = JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as { engines: { node: string } };
  t.equal(pkg.engines.node, SUPPORTED.map((s) => `^${s.major}.${s.minMinor}.0`).join(' || '));
});
