// Config reload (POST /admin/reload, SIGHUP): read the file again, validate it, and apply it
// to the running gateway without touching client connections. A file that does not validate
// changes nothing. What the file changed is applied when its key is live, and listed under
// restartRequired (and left as it runs) when not: the classes are config/reload-classes.ts's
// table (docs/configuration.md "Reload"), and the answer lists every change with its old and
// new value, secrets redacted. Live changes made through the admin API to things the file did
// not change (a node's weight, a drain) are kept. With TLS, the certificate files are read
// again too and, when their bytes changed, served to new connections (docs/configuration.md "TLS").

import type { Logger } from 'pino';
import { ConfigError, loadConfig, loadTls } from '../config/load.js';
import { rpcNodes } from '../config/node-kinds.js';
import type { Config } from '../config/schema.js';
import { configDiff, revertChange, shownChange } from '../config/reload-classes.js';
import { changedTlsFiles, type TlsMaterial } from '../config/tls.js';
import { staticTokenRecord, type TokenTable } from '../gateway/token-table.js';
import { hashToken } from '../token-format.js';
import type { NodePool } from '../upstream/pool.js';

export class ReloadError extends Error {
  constructor(
    /** HTTP status for the admin API: 409 nothing to reload, 400 invalid config. */
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ReloadError';
  }
}

export interface ReloadSummary {
  /** False when the file matches the running config. */
  changed: boolean;
  nodes: {
    added: string[];
    removed: string[];
    /** Same id, new url or ws: a new connection pool; the old one finishes its in-flight requests. */
    replaced: string[];
    /** Weights the file changed, as they were running (an admin API change included) and are now. */
    weights: Record<string, { from: number; to: number }>;
  };
  /** Static tokens (`tokens:` in the file). */
  tokens: { added: number; removed: number; changed: number };
  /** Changed keys now in effect (`limits.maxBatch`, `nodes.a.labels`; `tls.cert` also when only the file's contents changed). */
  applied: string[];
  /** Changed keys that take effect only after a restart; they keep running as they were. */
  restartRequired: string[];
  /** Every changed key of `applied` and `restartRequired`, in the file before and now (secrets redacted, absent = null). */
  changes: Record<string, { from: unknown; to: unknown }>;
}

/** What a reload reconfigures beside the node pool: the request path's settings and services (or, with worker threads, the control plane's share of them). */
export interface ReloadTarget {
  reconfigure(next: Config): void;
}

export interface ReloadParts {
  /** The file the gateway was started with; null in demo mode (nothing to reload). */
  configPath: string | null;
  pool: NodePool;
  target: ReloadTarget;
  tokens: TokenTable;
  log: Logger;
  /** Adjusts a freshly loaded config like at start (e.g. a --port given on the command line). */
  prepare?: ((config: Config) => void) | undefined;
  /** Called with the new admin token when it changed. */
  setAdminToken(token: string): void;
  /** The TLS files as served since the start; null or absent without TLS. */
  tls?: TlsMaterial | null;
  /** Serves these files to new connections on every TLS listener; throws, changing nothing, when it cannot. */
  replaceCertificates?: (material: TlsMaterial) => void;
}

export class Reloader {
  private current: Config;
  private served: TlsMaterial | null;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly parts: ReloadParts,
    config: Config,
  ) {
    this.current = config;
    this.served = parts.tls ?? null;
  }

  get config(): Config {
    return this.current;
  }

  /** Reloads (one at a time); rejects with ReloadError, changing nothing, when it can't. */
  reload(): Promise<ReloadSummary> {
    const run = this.queue.then(() => this.run());
    this.queue = run.catch(() => {});
    return run;
  }

  private async run(): Promise<ReloadSummary> {
    const path = this.parts.configPath;
    if (path === null) throw new ReloadError(409, 'nothing to reload: jumpgate was started without --config (demo mode)');
    let next: Config;
    try {
      next = loadConfig(path);
      this.parts.prepare?.(next);
      if (rpcNodes(next.nodes).length === 0) throw new ConfigError(['nodes: at least one node is required (block engines, kind jito, do not count)'], path);
    } catch (err) {
      if (err instanceof ConfigError) throw new ReloadError(400, err.message);
      throw err;
    }
    const certificates = this.replaceCertificates(next, path);
    const summary = await this.apply(next, certificates);
    this.parts.log.info({ ...summary, config: path }, summary.changed ? 'config reloaded' : 'config reloaded, nothing changed');
    return summary;
  }

  /**
   * Applies a config that is already loaded and checked: what `reload()` does after reading
   * the file, and what a data-plane worker does with the config the control plane reloaded.
   */
  applyConfig(next: Config): Promise<ReloadSummary> {
    const run = this.queue.then(() => this.apply(next, []));
    this.queue = run.catch(() => {});
    return run;
  }

  /**
   * Runs before anything else is applied: it is the one step that can still fail. Returns the
   * `tls.*` fields whose file contents changed (and are now served).
   */
  private replaceCertificates(next: Config, path: string): string[] {
    const served = this.served;
    // Turning TLS on or off is listed in restartRequired.
    if (served === null || next.tls === null || this.parts.replaceCertificates === undefined) return [];
    let material: TlsMaterial;
    try {
      material = loadTls(next.tls, path);
    } catch (err) {
      if (err instanceof ConfigError) throw new ReloadError(400, err.message);
      throw err;
    }
    const changed = changedTlsFiles(served, material);
    if (changed.length === 0) return [];
    try {
      this.parts.replaceCertificates(material);
    } catch (err) {
      if (err instanceof ConfigError) throw new ReloadError(400, err.message);
      throw err;
    }
    this.served = material;
    this.parts.log.info({ changed, cert: material.files.cert }, 'tls certificate replaced for new connections');
    return changed;
  }

  private async apply(next: Config, certificates: string[]): Promise<ReloadSummary> {
    const { pool, target, tokens, log } = this.parts;
    const prev = this.current;
    const diff = configDiff(prev, next);
    // What needs a restart keeps its running value before anything is applied, so nothing
    // below sees it, and later reloads compare against what runs.
    for (const c of diff) if (!c.live) revertChange(next, prev, c);

    // Nodes: the set (new url or ws: a new pool), then every other setting of the nodes kept.
    const nodes = { added: [] as string[], removed: [] as string[], replaced: [] as string[], weights: {} as Record<string, { from: number; to: number }> };
    if (diff.some((c) => c.pattern === 'nodes' || c.pattern.startsWith('nodes.'))) {
      Object.assign(nodes, await pool.replaceNodes(next.nodes));
      nodes.weights = pool.applyNodeSettings(next.nodes, prev.nodes);
    }

    // Static tokens: replace the previous file's entries (tokens from the store stay).
    const oldTokens = new Map(prev.tokens.map((t) => [t.token, t]));
    const newTokens = new Set(next.tokens.map((t) => t.token));
    const tok = { added: 0, removed: 0, changed: 0 };
    for (const t of prev.tokens) {
      if (newTokens.has(t.token)) continue;
      tokens.removeHashed(hashToken(t.token));
      tok.removed++;
    }
    for (const t of next.tokens) {
      const o = oldTokens.get(t.token);
      if (o !== undefined && o.stack === t.stack && o.active === t.active) continue;
      tokens.addPlain(t.token, staticTokenRecord(t.token, t.stack, t.active));
      if (o === undefined) tok.added++;
      else tok.changed++;
    }

    // Settings.
    pool.reconfigure(next);
    target.reconfigure(next);
    if (prev.log.level !== next.log.level) log.level = next.log.level;
    if (prev.admin.token !== next.admin.token) this.parts.setAdminToken(next.admin.token);

    const applied = diff.filter((c) => c.live).map((c) => c.path);
    const restartRequired = diff.filter((c) => !c.live).map((c) => c.path);
    const changes: ReloadSummary['changes'] = {};
    for (const c of diff) changes[c.path] = shownChange(c);
    // A certificate file whose contents changed under the same path: the path on both sides.
    for (const field of certificates) {
      if (applied.includes(field)) continue;
      applied.push(field);
      const file = next.tls?.[field.slice(4) as 'cert' | 'key' | 'ca'] ?? null;
      changes[field] = { from: file, to: file };
    }
    this.current = next;
    const changed = diff.length > 0 || certificates.length > 0;
    return { changed, nodes, tokens: tok, applied, restartRequired, changes };
  }
}
