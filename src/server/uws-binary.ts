// Which uWebSockets.js binary this process loads (docs/runtimes.md "uWebSockets.js builds").
// uWS ships one native addon per platform, architecture and Node ABI, linked against a glibc;
// no single package on the npm registry carries them all, so two are dependencies and the
// first whose binary fits the running Node and libc is loaded, straight from its file (each
// package's own loader only tries its one name and throws).

import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MAX_HEAD_BYTES } from './types.js';

/** The native module's functions we use. */
export interface UwsNative {
  App(): unknown;
  SSLApp(options: { cert_file_name: string; key_file_name: string; ca_file_name?: string }): unknown;
  us_listen_socket_close(socket: unknown): void;
  us_socket_local_port(socket: unknown): number;
}

export interface UwsBuild {
  /** The npm package, as its own name. */
  readonly name: string;
  readonly version: string;
  /** Folder of `uws_<platform>_<arch>_<abi>.node`; null when the package is not installed. */
  dir(): string | null;
  /** The Node ABIs (process.versions.modules) it carries for linux x64. */
  readonly abis: readonly number[];
  /** The lowest glibc its Linux binaries link against ([major, minor]). */
  readonly minGlibc: readonly [number, number];
}

/** What decides the choice: the running Node and C library. */
export interface Runtime {
  platform: string;
  arch: string;
  /** process.versions.modules. */
  abi: number;
  node: string;
  /** "2.36"; null on musl or where Node cannot tell. */
  glibc: string | null;
}

function resolveDir(specifier: string): string | null {
  try {
    return dirname(fileURLToPath(import.meta.resolve(specifier)));
  } catch {
    return null;
  }
}

/**
 * The builds, in order of preference. uws-pack 20.0.8 first: it is what every figure in
 * docs/benchmarks.md was measured with (Node 20 and 22). The second carries uWS v20.57.0's
 * binaries for Node 24 and 25 (ABIs 137 and 141), built against glibc 2.38.
 */
export const UWS_BUILDS: readonly UwsBuild[] = [
  {
    name: 'uws-pack',
    version: '20.0.8',
    // ESM-only: its entry is dist/index.mjs, binaries in dist/bin.
    dir: () => {
      const d = resolveDir('uWebSockets.js');
      return d === null ? null : join(d, 'bin');
    },
    abis: [108, 115, 120, 127],
    minGlibc: [2, 17],
  },
  {
    name: '@btc-vision/uwebsockets.js',
    version: '20.57.0',
    dir: () => resolveDir('@btc-vision/uwebsockets.js'),
    abis: [115, 127, 137, 141],
    minGlibc: [2, 38],
  },
];

export function currentRuntime(): Runtime {
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  return {
    platform: process.platform,
    arch: process.arch,
    abi: Number(process.versions.modules),
    node: process.versions.node,
    glibc: header?.glibcVersionRuntime ?? null,
  };
}

function glibcAtLeast(have: string | null, min: readonly [number, number]): boolean {
  if (have === null) return false;
  const [a = 0, b = 0] = have.split('.').map(Number);
  return a > min[0] || (a === min[0] && b >= min[1]);
}

export type UwsLoad = { ok: true; native: UwsNative; build: UwsBuild; reason: string } | { ok: false; reason: string };

/** Loads the first build that fits `rt`; else says, build by build, why none did. */
export function loadUws(rt: Runtime = currentRuntime(), builds: readonly UwsBuild[] = UWS_BUILDS): UwsLoad {
  const file = `uws_${rt.platform}_${rt.arch}_${rt.abi}.node`;
  const why: string[] = [];
  for (const b of builds) {
    const label = `${b.name} ${b.version}`;
    const dir = b.dir();
    if (dir === null) {
      why.push(`${label} is not installed`);
      continue;
    }
    const path = join(dir, file);
    if (!existsSync(path)) {
      why.push(`${label} has no ${file} (it carries Node ABIs ${b.abis.join(', ')})`);
      continue;
    }
    if (rt.platform === 'linux' && !glibcAtLeast(rt.glibc, b.minGlibc)) {
      why.push(`${label} needs glibc ${b.minGlibc.join('.')} or later, this system has ${rt.glibc ?? 'no glibc'}`);
      continue;
    }
    try {
      // Read once, when the binary loads: request line and headers up to the same bound as
      // Node's listener (uWS's own default is 4 KB), unless the operator set one.
      process.env.UWS_HTTP_MAX_HEADERS_SIZE ??= String(MAX_HEAD_BYTES);
      const native = createRequire(import.meta.url)(path) as UwsNative;
      return { ok: true, native, build: b, reason: `uWebSockets.js from ${label} (${file})` };
    } catch (err) {
      why.push(`${label}'s ${file} does not load: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  const libc = rt.platform === 'linux' ? `, glibc ${rt.glibc ?? 'none'}` : '';
  return { ok: false, reason: `no uWebSockets.js binary for Node.js ${rt.node} (ABI ${rt.abi}, ${rt.platform} ${rt.arch}${libc}): ${why.join('; ')}` };
}
