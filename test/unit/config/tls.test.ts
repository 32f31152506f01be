// The `tls` section (src/config/tls.ts through load.ts): its shape, and its files checked at
// load time, every problem naming its field. Certificates come from openssl (skipped without it).

import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ConfigError, parseConfig } from '../../../src/config/load.js';
import { changedTlsFiles, readTls } from '../../../src/config/tls.js';
import { makeCerts, NO_OPENSSL } from '../../helpers/certs.js';

function fails(yaml: string, env: NodeJS.ProcessEnv = {}): string {
  try {
    parseConfig(yaml, env);
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error('expected a ConfigError, but the config was accepted');
}

t.test('no tls (absent or null) is plain HTTP', async (t) => {
  t.equal(parseConfig('', {}).tls, null);
  t.equal(parseConfig('tls:\n', {}).tls, null);
  t.equal(parseConfig('tls: null\n', {}).tls, null);
});

t.test('the shape of tls: a mapping with cert and key, ca optional, nothing else', async (t) => {
  t.equal(fails('tls: true'), 'config: tls: expected a mapping, got true');
  t.equal(fails('tls: { cert: a.pem }'), 'config: tls.key: missing, expected a file path (PEM private key, not encrypted)');
  t.equal(fails('tls: { cert: "", key: k.pem }'), 'config: tls.cert: expected a file path (PEM certificate, intermediates after it), got ""');
  t.equal(fails('tls: { cert: a.pem, key: k.pem, caa: c.pem }'), 'config: tls: unknown key "caa" (did you mean "ca"?)');
});

t.test('tls files are read at load time; a missing one names the field and the path', async (t) => {
  const dir = t.testdir({});
  const cert = join(dir, 'nope.pem');
  const key = join(dir, 'nokey.pem');
  t.equal(fails(`tls: { cert: ${cert}, key: ${key} }`), `config: tls.cert: cannot read ${cert} (ENOENT)\nconfig: tls.key: cannot read ${key} (ENOENT)`);
  t.equal(fails(`tls: { cert: ${dir}, key: ${key} }`).split('\n')[0], `config: tls.cert: cannot read ${dir} (EISDIR)`);
  t.equal(
    fails('tls: { cert: ${CERT}, key: ${KEY} }', { CERT: cert, KEY: key }).split('\n')[0],
    `config: tls.cert: cannot read ${cert} (ENOENT)`,
    'paths from the environment',
  );
});

t.test('tls files that do not parse or do not match are config errors naming the field', { skip: NO_OPENSSL }, async (t) => {
  const dir = t.testdir({ 'garbage.pem': 'not a pem file\n' });
  const certs = makeCerts(dir);
  const garbage = join(dir, 'garbage.pem');
  const enc = join(dir, 'enc.key');
  execFileSync('openssl', ['pkey', '-in', certs.a.key, '-aes256', '-passout', 'pass:secret', '-out', enc], { stdio: 'pipe' });

  const ok = parseConfig(`tls: { cert: ${certs.a.cert}, key: ${certs.a.key}, ca: ${certs.ca} }`, {});
  t.same(ok.tls, { cert: certs.a.cert, key: certs.a.key, ca: certs.ca });
  t.equal(fails(`tls: { cert: ${garbage}, key: ${certs.a.key} }`), `config: tls.cert: ${garbage} is not a PEM certificate: no PEM certificate in it`);
  t.equal(
    fails(`tls: { cert: ${certs.a.key}, key: ${certs.a.key} }`),
    `config: tls.cert: ${certs.a.key} is not a PEM certificate: no PEM certificate in it`,
    'a key given as the certificate',
  );
  t.match(fails(`tls: { cert: ${certs.a.cert}, key: ${certs.a.cert} }`), `config: tls.key: ${certs.a.cert} is not an unencrypted PEM private key`);
  t.match(fails(`tls: { cert: ${certs.a.cert}, key: ${enc} }`), `config: tls.key: ${enc} is not an unencrypted PEM private key`, 'an encrypted key');
  t.equal(
    fails(`tls: { cert: ${certs.a.cert}, key: ${certs.b.key} }`),
    `config: tls.key: ${certs.b.key} does not match the certificate in tls.cert (${certs.a.cert})`,
  );
  t.equal(
    fails(`tls: { cert: ${certs.a.cert}, key: ${certs.a.key}, ca: ${garbage} }`),
    `config: tls.ca: ${garbage} is not a PEM certificate bundle: no PEM certificate in it`,
  );
  const broken = join(dir, 'broken.pem');
  writeFileSync(broken, readFileSync(certs.ca, 'latin1').replace(/(BEGIN CERTIFICATE-----\n)\S{20}/, '$1' + 'A'.repeat(20)));
  t.match(
    fails(`tls: { cert: ${certs.a.cert}, key: ${certs.a.key}, ca: ${broken} }`),
    `config: tls.ca: ${broken} is not a PEM certificate bundle: a certificate in it does not parse`,
  );
  t.equal(fails(`tls: { cert: ${garbage}, key: ${garbage}, ca: ${garbage} }`).split('\n').length, 3, 'every problem, one line each');
});

t.test('changedTlsFiles compares contents, not paths', { skip: NO_OPENSSL }, async (t) => {
  const dir = t.testdir({});
  const certs = makeCerts(dir);
  const read = (cert: string, key: string, ca?: string) => {
    const r = readTls(ca === undefined ? { cert, key } : { cert, key, ca });
    if (r.material === null) throw new Error(r.problems.join('\n'));
    return r.material;
  };
  const a = read(certs.a.cert, certs.a.key);
  copyFileSync(certs.a.cert, join(dir, 'copy.crt'));
  t.same(changedTlsFiles(a, read(join(dir, 'copy.crt'), certs.a.key)), [], 'same bytes at another path');
  t.same(changedTlsFiles(a, read(certs.b.cert, certs.b.key)), ['tls.cert', 'tls.key']);
  t.same(changedTlsFiles(a, read(certs.a.cert, certs.a.key, certs.ca)), ['tls.ca'], 'a CA added');
  t.same(changedTlsFiles(read(certs.a.cert, certs.a.key, certs.ca), a), ['tls.ca'], 'a CA removed');
});
