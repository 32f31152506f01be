// What a reload may change while the gateway runs (docs/configuration.md "Reload"): every key of
// the config schema is classed live (applied at once) or restart (listed under restartRequired
// and left as it runs). configDiff() compares two validated configs key by key and classes each
// change; the reload answer shows every one of them, secrets redacted.

export type ReloadClass = 'live' | 'restart';

/**
 * Every leaf of the config schema, by path; `*` stands for the id of an entry of `nodes` or
 * `grpc.sources` (`nodes.*` itself is a node added or removed, `nodes` their order). A record
 * (`routing.methods`, `nodes.*.labels`) is one leaf. test/unit/config/reload-classes.test.ts
 * fails when a schema key is missing here: a new key must be classed.
 */
export const RELOAD_CLASSES: Readonly<Record<string, ReloadClass>> = {
  chain: 'restart',
  'rpc.host': 'restart',
  'rpc.port': 'restart',
  'rpc.wsPort': 'restart',
  'rpc.workers': 'restart',
  'rpc.server': 'restart',
  'console.host': 'restart',
  'console.port': 'restart',
  'console.registration': 'restart',
  'admin.host': 'restart',
  'admin.port': 'restart',
  'admin.token': 'live',
  tls: 'restart',
  'tls.cert': 'live',
  'tls.key': 'live',
  'tls.ca': 'live',
  'store.url': 'restart',
  'store.retentionDays': 'restart',
  'headers.brand': 'live',
  exposeNode: 'live',
  'cors.origins': 'live',
  trustedProxies: 'live',
  // Node settings: NodePool.replaceNodes (the set; a new url or ws is a new connection pool) and
  // NodePool.applyNodeSettings (everything else about a node), on every data plane.
  nodes: 'live',
  'nodes.*': 'live',
  'nodes.*.url': 'live',
  'nodes.*.ws': 'live',
  'nodes.*.weight': 'live',
  'nodes.*.labels': 'live',
  'nodes.*.expectLag': 'live',
  'nodes.*.kind': 'live',
  'nodes.*.headers': 'live',
  'nodes.*.rateLimit': 'live',
  // Per-node budgets and method lists: classed ahead of their schema keys, each compared whole;
  // applyNodeSettings is where they are rebuilt.
  'nodes.*.budget': 'live',
  'nodes.*.methods': 'live',
  tokens: 'live',
  'limits.maxBodyBytes': 'live',
  'limits.maxBatch': 'live',
  'limits.streamAnswersOverBytes': 'live',
  'limits.maxBufferedAnswerBytes': 'live',
  'limits.upstreamTimeoutMs': 'live',
  'limits.methodTimeoutMs': 'live',
  'upstream.client': 'restart',
  'upstream.connections': 'restart',
  'upstream.pipelining': 'restart',
  'upstream.pipelineStallMs': 'restart',
  'routing.upstreamBatch': 'live',
  'routing.maxAttempts': 'live',
  'routing.autoAffinityMethods': 'live',
  'routing.noRetryMethods': 'live',
  'routing.broadcast.methods': 'live',
  'routing.broadcast.fanout': 'live',
  'routing.broadcast.engines': 'live',
  'routing.unsupportedMs': 'live',
  'routing.hedge.methods': 'live',
  'routing.hedge.percentile': 'live',
  'routing.hedge.minDelayMs': 'live',
  'routing.hedge.maxDelayMs': 'live',
  'routing.hedge.maxExtra': 'live',
  'routing.coalesce.methods': 'live',
  'routing.coalesce.windowMs': 'live',
  'routing.methods': 'live',
  'routing.minContextSlotWaitMs': 'live',
  'routing.blockhashWaitMs': 'live',
  'routing.landing.commitment': 'live',
  'routing.landing.maxTracked': 'live',
  'routing.landing.rebroadcastMs': 'live',
  'routing.landing.ranking.enabled': 'live',
  'routing.landing.ranking.halfLifeMs': 'live',
  'routing.landing.ranking.overdueSlots': 'live',
  'routing.landing.ranking.fallbackSlots': 'live',
  'routing.landing.ranking.minSamples': 'live',
  'routing.landing.ranking.exploreShare': 'live',
  'routing.landing.ranking.slotWeight': 'live',
  'fees.estimates.enabled': 'restart',
  'fees.estimates.lookbackSlots': 'live',
  'affinity.seed': 'restart',
  'affinity.keyRate': 'live',
  'affinity.keyBurst': 'live',
  'affinity.maxTrackedKeys': 'restart',
  'affinity.monotonic': 'live',
  'affinity.monotonicWaitMs': 'live',
  'rateLimits.token.rate': 'live',
  'rateLimits.token.burst': 'live',
  'rateLimits.methods': 'live',
  'health.intervalMs': 'live',
  'health.maxSlotLag': 'live',
  'health.timeoutMs': 'live',
  'health.ejectAfterFailures': 'live',
  'health.ejectBackoffMs': 'live',
  'health.ejectBackoffMaxMs': 'live',
  'health.chainPollMs': 'live',
  'health.chainWatch': 'live',
  'grpc.host': 'restart',
  'grpc.port': 'restart',
  'grpc.sources': 'restart',
  'grpc.sources.*': 'restart',
  'grpc.sources.*.url': 'restart',
  'grpc.sources.*.xToken': 'restart',
  'grpc.windowSlots': 'restart',
  'grpc.windowBytes': 'restart',
  'grpc.sourceStallMs': 'restart',
  'grpc.limits.maxStreamsPerToken': 'restart',
  'grpc.limits.maxFiltersPerStream': 'restart',
  'grpc.limits.maxAccountsPerFilter': 'restart',
  'grpc.limits.maxOwnersPerFilter': 'restart',
  'grpc.limits.maxDataFiltersPerFilter': 'restart',
  'grpc.limits.maxQueuedMessages': 'restart',
  'grpc.limits.maxRequestBytes': 'restart',
  'cache.accounts.enabled': 'restart',
  'cache.accounts.maxBytes': 'restart',
  'cache.accounts.maxKeys': 'restart',
  'cache.accounts.idleMs': 'restart',
  'cache.accounts.hotAfterReads': 'restart',
  'cache.accounts.commitments': 'restart',
  'cache.accounts.maxLagSlots': 'restart',
  'cache.accounts.maxAccountBytes': 'restart',
  'ws.maxSubscriptionsPerConnection': 'restart',
  'ws.maxConnectionsPerToken': 'restart',
  'ws.maxMessageBytes': 'restart',
  'ws.maxBufferedBytes': 'restart',
  'ws.idleTimeoutSec': 'restart',
  'ws.redundancy': 'restart',
  'offload.threads': 'restart',
  'offload.parseThresholdBytes': 'restart',
  'offload.mergeThresholdBytes': 'restart',
  'redis.url': 'restart',
  'redis.syncMs': 'restart',
  'redis.keyPrefix': 'restart',
  'redis.maxKeysPerSync': 'restart',
  'log.level': 'live',
  'shutdown.readyDelayMs': 'live',
};

/** A step of a change's location: a key, or the entry of an id-keyed list with that id. */
type Step = string | { id: string };

export interface ConfigChange {
  /** Dotted, with node and source ids: `nodes.a.labels`, `limits.maxBatch`. */
  path: string;
  /** The table row it falls under: `nodes.*.labels`. */
  pattern: string;
  live: boolean;
  /** The values before and after (undefined: absent), as in the files: not redacted. */
  from: unknown;
  to: unknown;
  readonly at: readonly Step[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
const hasRows = (pattern: string): boolean => Object.keys(RELOAD_CLASSES).some((k) => k.startsWith(pattern + '.'));
const idList = (pattern: string): boolean => Object.hasOwn(RELOAD_CLASSES, pattern + '.*');
const idOf = (e: unknown): string => String((e as Obj)['id']);

/** Every change from `a` to `b` (two validated configs), in the schema's key order. A key not in the table is restart. */
export function configDiff(a: unknown, b: unknown): ConfigChange[] {
  const out: ConfigChange[] = [];
  walk(a, b, [], '', '', out);
  return out;
}

function push(out: ConfigChange[], at: Step[], path: string, pattern: string, from: unknown, to: unknown): void {
  out.push({ path, pattern, live: RELOAD_CLASSES[pattern] === 'live', from, to, at });
}

function walk(a: unknown, b: unknown, at: Step[], path: string, pattern: string, out: ConfigChange[]): void {
  if (same(a, b)) return;
  const join = (p: string, k: string): string => (p === '' ? k : `${p}.${k}`);
  if (pattern !== '' && idList(pattern) && Array.isArray(a) && Array.isArray(b)) {
    const before = new Map(a.map((e) => [idOf(e), e]));
    const after = new Map(b.map((e) => [idOf(e), e]));
    const kept = (ids: string[], other: Map<string, unknown>): string[] => ids.filter((id) => other.has(id));
    const order = [...after.keys()];
    if (!same(kept([...before.keys()], after), kept(order, before))) push(out, [...at], path, pattern, [...before.keys()], order);
    for (const id of new Set([...before.keys(), ...order])) {
      const x = before.get(id);
      const y = after.get(id);
      const step = [...at, { id }];
      if (x === undefined || y === undefined) push(out, step, join(path, id), `${pattern}.*`, x, y);
      else walk(x, y, step, join(path, id), `${pattern}.*`, out);
    }
    return;
  }
  if (isObj(a) && isObj(b) && (pattern === '' || hasRows(pattern))) {
    for (const k of new Set([...Object.keys(b), ...Object.keys(a)])) {
      if (k === 'id' && pattern.endsWith('*')) continue;
      walk(a[k], b[k], [...at, k], join(path, k), join(pattern, k), out);
    }
    return;
  }
  push(out, at, path, pattern, a, b);
}

/** Sets what `change` located in `next` back to its value in `prev` (a change that waits for a restart). */
export function revertChange(next: unknown, prev: unknown, change: ConfigChange): void {
  let n = next;
  let p = prev;
  const steps = change.at;
  for (const s of steps.slice(0, -1)) {
    n = stepInto(n, s);
    p = stepInto(p, s);
  }
  const last = steps[steps.length - 1];
  if (last === undefined) return;
  if (typeof last === 'string') {
    const target = n as Obj;
    const value = (p as Obj | undefined)?.[last];
    if (Array.isArray(value) && change.pattern !== '' && idList(change.pattern) && Array.isArray(target[last])) {
      // The order of an id-keyed list: the previous order, entries the other changes add last.
      const rank = new Map(value.map((e, i) => [idOf(e), i]));
      (target[last] as unknown[]).sort((x, y) => (rank.get(idOf(x)) ?? Infinity) - (rank.get(idOf(y)) ?? Infinity));
    } else if (value === undefined) delete target[last];
    else target[last] = structuredClone(value);
    return;
  }
  const list = n as unknown[];
  const before = p as unknown[];
  const i = list.findIndex((e) => idOf(e) === last.id);
  const old = before.find((e) => idOf(e) === last.id);
  if (old === undefined) list.splice(i, 1);
  else if (i >= 0) list[i] = structuredClone(old);
  else {
    // Back where it was among the entries that stay.
    const rank = new Map(before.map((e, k) => [idOf(e), k]));
    const r = rank.get(last.id)!;
    const at = list.findIndex((e) => (rank.get(idOf(e)) ?? Infinity) > r);
    list.splice(at < 0 ? list.length : at, 0, structuredClone(old));
  }
}

function stepInto(v: unknown, s: Step): unknown {
  if (typeof s === 'string') return (v as Obj)[s];
  return (v as unknown[]).find((e) => idOf(e) === s.id);
}

/**
 * A URL as a reload answer may show it: no user or password, and a path and query replaced by
 * `***` (node URLs often carry an API key there: `/v2/KEY`, `?api-key=KEY`).
 */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    const hidden = (u.pathname !== '/' && u.pathname !== '') || u.search !== '';
    const creds = u.username !== '' || u.password !== '' ? '***@' : '';
    return `${u.protocol}//${creds}${u.host}${hidden ? '/***' : '/'}`;
  } catch {
    return '***';
  }
}

/** Only the password hidden: `store.url`, `redis.url` (the host and database are worth seeing). */
function redactPassword(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return '***';
  }
}

const SECRET = '***';
const urlOrAbsent = (v: unknown): unknown => (typeof v === 'string' ? redactUrl(v) : v);
const hideEntry = (v: unknown): unknown => {
  if (!isObj(v)) return v;
  const e: Obj = { ...v, url: urlOrAbsent(v['url']) };
  if (v['ws'] !== undefined) e['ws'] = urlOrAbsent(v['ws']);
  if (v['xToken'] !== undefined) e['xToken'] = SECRET;
  if (isObj(v['headers'])) e['headers'] = hideHeaders(v['headers']);
  return e;
};

/** Header values carry credentials (a block engine's auth): only their names are shown. */
function hideHeaders(v: unknown): unknown {
  return isObj(v) ? Object.fromEntries(Object.keys(v).map((k) => [k, SECRET])) : v;
}

/** How a value of each secret-bearing row is shown. */
const REDACT: Readonly<Record<string, (v: unknown) => unknown>> = {
  'admin.token': (v) => (v === '' ? '' : SECRET),
  tokens: (v) => (Array.isArray(v) ? `${v.length} token${v.length === 1 ? '' : 's'}` : v),
  'store.url': (v) => (typeof v === 'string' ? redactPassword(v) : v),
  'redis.url': (v) => (typeof v === 'string' ? redactPassword(v) : v),
  'nodes.*': hideEntry,
  'nodes.*.url': urlOrAbsent,
  'nodes.*.ws': urlOrAbsent,
  'nodes.*.headers': hideHeaders,
  'grpc.sources.*': hideEntry,
  'grpc.sources.*.url': urlOrAbsent,
  'grpc.sources.*.xToken': (v) => (v === undefined ? v : SECRET),
};

/** A change's values as the reload answer shows them: secrets hidden, an absent value null. */
export function shownChange(c: ConfigChange): { from: unknown; to: unknown } {
  const r = REDACT[c.pattern] ?? ((v: unknown) => v);
  return { from: r(c.from) ?? null, to: r(c.to) ?? null };
}
