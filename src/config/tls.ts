// The files of the `tls` section (docs/configuration.md "TLS"), read and checked: readable, PEM that parses,
// a key that matches the certificate. Config loading runs this so a bad file is a config
// error at start and a refused reload, never a listener that cannot start or a handshake
// that fails later. Problems come back as text, each naming its field; load.ts makes them a
// ConfigError (this file cannot import load.ts, which imports it).

import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import type { TlsConfig } from './schema.js';

/** The bytes of the files `tls` names, as they were when read. */
export interface TlsMaterial {
  /** The paths they were read from. */
  readonly files: TlsConfig;
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly ca: Buffer | null;
}

export type TlsRead = { readonly material: TlsMaterial; readonly problems: null } | { readonly material: null; readonly problems: string[] };

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** An OpenSSL error message without its "error:0480006C:PEM routines::" prefix. */
function reason(err: unknown): string {
  const m = (err as Error).message;
  return m.replace(/^error:[0-9A-F]+:[^:]*:[^:]*:/, '');
}

function read(field: string, path: string, problems: string[]): Buffer | null {
  try {
    return readFileSync(path);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    problems.push(`${field}: cannot read ${path} (${e.code ?? e.message})`);
    return null;
  }
}

/** Every certificate block in `pem` parses, and there is at least one. */
function certificatesProblem(pem: Buffer): string | null {
  const blocks = pem.toString('latin1').match(PEM_CERT);
  if (blocks === null) return 'no PEM certificate in it';
  for (const block of blocks) {
    try {
      new X509Certificate(block);
    } catch (err) {
      return `a certificate in it does not parse (${reason(err)})`;
    }
  }
  return null;
}

export function readTls(files: TlsConfig): TlsRead {
  const problems: string[] = [];
  const cert = read('tls.cert', files.cert, problems);
  const key = read('tls.key', files.key, problems);
  const ca = files.ca === undefined ? null : read('tls.ca', files.ca, problems);
  if (cert !== null) {
    const bad = certificatesProblem(cert);
    if (bad !== null) problems.push(`tls.cert: ${files.cert} is not a PEM certificate: ${bad}`);
  }
  if (key !== null) {
    try {
      createSecureContext({ key });
    } catch (err) {
      problems.push(`tls.key: ${files.key} is not an unencrypted PEM private key (${reason(err)})`);
    }
  }
  if (ca !== null) {
    const bad = certificatesProblem(ca);
    if (bad !== null) problems.push(`tls.ca: ${files.ca} is not a PEM certificate bundle: ${bad}`);
  }
  if (problems.length > 0 || cert === null || key === null) return { material: null, problems };
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    const mismatch = (err as { code?: string }).code === 'ERR_OSSL_X509_KEY_VALUES_MISMATCH';
    problems.push(
      mismatch
        ? `tls.key: ${files.key} does not match the certificate in tls.cert (${files.cert})`
        : `tls.cert: ${files.cert} cannot be used with tls.key (${reason(err)})`,
    );
    return { material: null, problems };
  }
  return { material: { files: { ...files }, cert, key, ca }, problems: null };
}

/** The fields whose file contents differ between two reads (`tls.cert`, `tls.key`, `tls.ca`). */
export function changedTlsFiles(a: TlsMaterial, b: TlsMaterial): string[] {
  const out: string[] = [];
  if (!a.cert.equals(b.cert)) out.push('tls.cert');
  if (!a.key.equals(b.key)) out.push('tls.key');
  if (!(a.ca === null ? b.ca === null : b.ca !== null && a.ca.equals(b.ca))) out.push('tls.ca');
  return out;
}
