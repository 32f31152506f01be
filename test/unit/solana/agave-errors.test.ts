import t from 'tap';
import { readFileSync } from 'node:fs';
import { AGAVE_ERRORS, agaveError, classOf, ErrorClass } from '../../../src/solana/agave-errors.js';

const CLASS_TEXT = ['final', 'retry on another node', 'mark the node, retry elsewhere', 'retry on an archive node'];

t.test('every Agave server code from -32001 to -32019, once', async (t) => {
  const codes = AGAVE_ERRORS.map((e) => e.code);
  t.same(
    codes,
    Array.from({ length: 19 }, (_, i) => -32001 - i),
  );
  for (const e of AGAVE_ERRORS) {
    t.equal(classOf(e.code), e.cls);
    t.equal(agaveError(e.code), e);
  }
  for (const code of [-32000, -32020, -32601, 7429, 0]) {
    t.equal(classOf(code), ErrorClass.Final, `${code} is not Agave's: final`);
    t.equal(agaveError(code), undefined);
  }
});

t.test('the docs table is the code table', async (t) => {
  const doc = readFileSync(new URL('../../../../docs/solana-routing.md', import.meta.url), 'utf8');
  for (const e of AGAVE_ERRORS) {
    t.ok(doc.includes(`| ${e.code} | ${e.name} | ${CLASS_TEXT[e.cls]} | ${e.why} |`), `${e.code} documented as in the code`);
  }
});
