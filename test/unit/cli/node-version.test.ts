// The start-up runtime check (src/cli/node-version.ts): Node.js 20.19+ and 22 run; others get
// one line naming the supported versions and what to do; package.json's engines agrees.

import { readFileSync } from 'node:fs';
import t from 'tap';
import { SUPPORTED, unsupportedNode } from '../../../src/cli/node-version.js';

t.test('supported majors pass, others get one line naming the supported versions', async (t) => {
  for (const v of ['20.19.0', '20.19.5', '22.0.0', '22.23.3']) t.equal(unsupportedNode(v), null, v);
  for (const v of ['18.20.4', '20.8.1', '21.7.3', '23.0.0', '24.11.0', '25.1.0']) {
    const line = unsupportedNode(v);
    t.type(line, 'string', v);
    t.notMatch(line!, /\n/, 'one line');
    t.match(line!, new RegExp(`Node\\.js ${v.replace(/\./g, '\\.')} is not supported`));
    t.match(line!, /Node\.js 20 \(20\.19 or later\) and 22/);
    t.match(line!, /install one of those/);
  }
  t.equal(unsupportedNode(process.versions.node), null, 'the Node.js running this test is supported');
});

t.test('package.json engines names the same versions', async (t) => {
  const pkg = JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as { engines: { node: string } };
  t.equal(pkg.engines.node, SUPPORTED.map((s) => `^${s.major}.${s.minMinor}.0`).join(' || '));
});
