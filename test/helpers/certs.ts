// Test certificates made with `openssl` at test time: a CA and two server certificates it
// signed (`a`, `b`, for 127.0.0.1 and localhost), so a client that trusts the CA accepts both
// and a certificate swap shows as a different fingerprint; a client certificate from the same
// CA and a self-signed one (for tls.ca). Tests skip with `NO_OPENSSL` as the reason when the
// command is missing.

import { execFileSync, spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** false when `openssl` runs, else why TLS tests are skipped. */
export const NO_OPENSSL: string | false =
  spawnSync('openssl', ['version'], { stdio: 'ignore' }).status === 0
    ? false
    : 'openssl is not installed (apt-get install openssl): the TLS tests make their certificates with it';

export interface ServerCert {
  cert: string;
  key: string;
  /** SHA-256 fingerprint as node's getPeerCertificate() shows it. */
  fingerprint: string;
}

export interface TestCerts {
  /** The CA certificate file. */
  ca: string;
  caPem: Buffer;
  a: ServerCert;
  b: ServerCert;
  /** A client certificate the CA signed. */
  client: ServerCert;
  /** A self-signed client certificate. */
  stranger: ServerCert;
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** Writes ca.crt, a.crt/a.key and b.crt/b.key into `dir`. */
export function makeCerts(dir: string): TestCerts {
  const openssl = (args: string[]): void => void execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  openssl(['req', '-x509', ...EC, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=jumpgate test CA']);
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
  writeFileSync(join(dir, 'client.ext'), 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n');
  const files = (name: string): ServerCert => {
    const cert = join(dir, `${name}.crt`);
    return { cert, key: join(dir, `${name}.key`), fingerprint: new X509Certificate(readFileSync(cert)).fingerprint256 };
  };
  const signed = (name: string, serial: number, ext: string): ServerCert => {
    openssl(['req', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=jumpgate test ${name}`]);
    openssl([
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-set_serial',
      String(serial),
      '-days',
      '2',
      '-extfile',
      ext,
      '-out',
      `${name}.crt`,
    ]);
    return files(name);
  };
  openssl(['req', '-x509', ...EC, '-keyout', 'stranger.key', '-out', 'stranger.crt', '-days', '2', '-subj', '/CN=jumpgate test stranger']);
  const ca = join(dir, 'ca.crt');
  return {
    ca,
    caPem: readFileSync(ca),
    a: signed('a', 1, 'server.ext'),
    b: signed('b', 2, 'server.ext'),
    client: signed('client', 3, 'client.ext'),
    stranger: files('stranger'),
  };
}
