// jumpgate instances as operators run them: `node dist/src/cli/main.js start --config FILE`,
// one process each, with the config written as YAML into a temp folder. For the tests of the
// stop sequence and of several instances behind a balancer (docs/instances.md "Running several instances").

import { request } from 'node:http';
import { connect } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { runCli, type CliProc } from './cli.js';
import { freePort } from './ports.js';

export const GET_SLOT = '{"jsonrpc":"2.0","id":1,"method":"getSlot"}';

/** True when a TCP connection to 127.0.0.1:port is refused. */
export function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One POST on a connection of its own (no keep-alive pool): what a client new to the gateway sends. */
export function postOnce(url: string, body: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.setTimeout(15_000, () => req.destroy(new Error(`no answer from ${url} within 15 s`)));
    req.on('error', reject);
    req.end(body);
  });
}

export interface Instance {
  readonly proc: CliProc;
  /** The RPC port as bound. */
  readonly port: number;
  /** http://127.0.0.1:ADMIN */
  readonly adminUrl: string;
  readonly adminPort: number;
  readonly configPath: string;
  /** http://127.0.0.1:PORT/api-token/TOKEN */
  rpcUrl(token: string): string;
  /** GET on the admin listener with the admin token. */
  admin(path: string): Promise<{ status: number; text: string }>;
}

export interface InstanceOptions {
  /** Folder for the config file. */
  dir: string;
  name: string;
  /** The config (YAML is written from it); `admin.port` is filled in with a free port. */
  config: Record<string, unknown>;
  adminToken: string;
  env?: NodeJS.ProcessEnv;
}

/** Starts `jumpgate start --config` and resolves once its RPC and admin ports listen. */
export async function startInstance(opts: InstanceOptions): Promise<Instance> {
  const adminPort = await freePort();
  const config = { ...opts.config, admin: { host: '127.0.0.1', port: adminPort, token: opts.adminToken } };
  const configPath = join(opts.dir, `${opts.name}.yaml`);
  writeFileSync(configPath, stringify(config));
  const proc = runCli(['start', '--config', configPath], { env: opts.env });
  let port: number;
  try {
    port = Number((await proc.waitFor(/"port":(\d+)[^\n]*"msg":"rpc listening"/, 20_000))[1]);
    await proc.waitFor(/"msg":"admin listening/, 20_000);
  } catch (err) {
    proc.child.kill('SIGKILL');
    throw err;
  }
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  return {
    proc,
    port,
    adminUrl,
    adminPort,
    configPath,
    rpcUrl: (token) => `http://127.0.0.1:${port}/api-token/${token}`,
    async admin(path) {
      const r = await fetch(adminUrl + path, { headers: { authorization: `Bearer ${opts.adminToken}` } });
      return { status: r.status, text: await r.text() };
    },
  };
}

export { freePort };
