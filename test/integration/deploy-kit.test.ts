// The deployment kit under deploy/ (docs/instances.md "Running several instances") says what the gateway
// does: the Grafana dashboard queries only metrics the gateway exports; the HAProxy and nginx
// files are valid for the binaries that read them; the HAProxy checks, the systemd stop
// timeout and the Prometheus job agree with jumpgate's defaults.

import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { parse } from 'yaml';
import { DEFAULTS } from '../../src/config/defaults.js';
import { eventually } from '../helpers/eventually.js';
import { frontMissing } from '../helpers/fronts.js';
import { startHarness, TOKEN } from '../helpers/gateway.js';
import { openWs } from '../helpers/ws-client.js';

const run = promisify(execFile);
const DEPLOY = new URL('../../../deploy/', import.meta.url).pathname;
const ADMIN_TOKEN = 'deploy-kit-admin-token-0123456789';
/** Where Debian's libnginx-mod-stream puts nginx's stream module. */
const NGINX_STREAM_MODULE = '/usr/lib/nginx/modules/ngx_stream_module.so';

async function hasCommand(name: string): Promise<boolean> {
  return run('sh', ['-c', `command -v ${name}`]).then(
    () => true,
    () => false,
  );
}

/** Runs a checker; its output either way. */
function check(cmd: string, args: string[]): Promise<{ ok: boolean; out: string }> {
  return run(cmd, args).then(
    (o) => ({ ok: true, out: o.stdout + o.stderr }),
    (e: { stdout?: string; stderr?: string }) => ({ ok: false, out: `${e.stdout ?? ''}${e.stderr ?? ''}` }),
  );
}

const noHaproxy = await frontMissing('haproxy');
const noNginx = await frontMissing('nginx');
const noStream = noNginx ?? (existsSync(NGINX_STREAM_MODULE) ? null : "nginx's stream module is not installed (apt-get install -y libnginx-mod-stream)");
const noSystemdAnalyze = (await hasCommand('systemd-analyze')) ? null : 'systemd-analyze not installed (apt-get install -y systemd)';

const PROMQL_WORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan']);

/**
 * Metric names a PromQL expression reads: identifiers that are not functions, keywords, label
 * names in `{…}`, `by (…)` / `without (…)` / `on (…)` lists, strings, durations or variables.
 */
function promqlMetrics(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$\{?\w+\}?/g, ' ');
  const out = new Set<string>();
  for (const m of bare.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const after = bare.slice(m.index + m[0].length);
    if (/^\s*\(/.test(after) || PROMQL_WORDS.has(m[0].toLowerCase())) continue;
    out.add(m[0]);
  }
  return [...out];
}

interface Panel {
  title?: string;
  targets?: { expr?: string }[];
  panels?: Panel[];
}

function dashboardExprs(): string[] {
  const dash = JSON.parse(readFileSync(join(DEPLOY, 'grafana/jumpgate.json'), 'utf8')) as { panels: Panel[]; templating: { list: { definition?: string }[] } };
  const exprs: string[] = [];
  const walk = (ps: Panel[]): void => {
    for (const p of ps) {
      for (const target of p.targets ?? []) if (target.expr !== undefined) exprs.push(target.expr);
      walk(p.panels ?? []);
    }
  };
  walk(dash.panels);
  // label_values(metric, label) in the variables reads a metric too.
  for (const v of dash.templating.list) {
    const m = /label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)/.exec(v.definition ?? '');
    if (m !== null) exprs.push(m[1]!);
  }
  return exprs;
}

/** Sample names in a Prometheus text exposition (histograms show as _bucket/_sum/_count). */
function sampleNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    names.add(/^[A-Za-z_:][A-Za-z0-9_:]*/.exec(line)![0]);
  }
  return names;
}

t.test('PromQL metric names are read from expressions, not functions, labels or variables', async (t) => {
  t.same(promqlMetrics('histogram_quantile(0.99, sum by (node, le) (rate(jumpgate_node_latency_seconds_bucket{instance=~"$instance"}[$__rate_interval])))'), [
    'jumpgate_node_latency_seconds_bucket',
  ]);
  t.same(promqlMetrics('sum by (node) (rate(a_total[5m])) / sum without (x) (b_total{status!~"2.."}) > 0 and on (node) c'), ['a_total', 'b_total', 'c']);
});

t.test('every metric the Grafana dashboard queries is exported, with samples', async (t) => {
  const h = await startHarness({
    admin: true,
    config: { admin: { token: ADMIN_TOKEN }, rateLimits: { methods: { getBalance: { rate: 1, burst: 1 } } } },
  });
  t.teardown(() => h.close());
  // Samples for every family: calls, a rate-limited one, a WebSocket subscription.
  t.equal((await h.call('getSlot')).status, 200);
  const limited = [];
  for (let i = 0; i < 3; i++) limited.push((await h.call('getBalance', ['11111111111111111111111111111111'])).status);
  t.ok(limited.includes(429), 'a request refused by a rate limit');
  const ws = await openWs(`${h.url.replace('http', 'ws')}/api-token/${TOKEN}/`);
  t.teardown(() => ws.close());
  ws.send({ jsonrpc: '2.0', id: 1, method: 'slotSubscribe' });
  await ws.next((f) => f.id === 1);

  const wanted = new Set(dashboardExprs().flatMap(promqlMetrics));
  t.ok(wanted.size >= 10, `the dashboard reads ${wanted.size} metrics: ${[...wanted].join(', ')}`);
  let exported = new Set<string>();
  const scrape = async (): Promise<boolean> => {
    const r = await fetch(`${h.gw.admin!.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    exported = sampleNames(await r.text());
    return [...wanted].every((m) => exported.has(m));
  };
  // Slot lag appears once the first health probes have answered.
  await eventually('every dashboard metric in /metrics', scrape, 10_000).catch(() => {});
  for (const m of wanted) t.ok(exported.has(m), `${m} is exported`);
});

t.test('HAProxy configs are valid (haproxy -c)', { skip: noHaproxy ?? false }, async (t) => {
  for (const file of ['haproxy/jumpgate.cfg', 'haproxy/jumpgate-cluster.cfg']) {
    const r = await check('haproxy', ['-c', '-f', join(DEPLOY, file)]);
    t.ok(r.ok, `${file}: ${r.out.trim()}`);
  }
});

/** `nginx -t` of a main file written around one of ours, in a temp prefix. */
async function nginxTest(main: (dir: string) => string): Promise<{ ok: boolean; out: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'jg-nginx-t-'));
  writeFileSync(join(dir, 'nginx.conf'), main(dir));
  return check('nginx', ['-e', 'stderr', '-p', dir, '-t', '-c', join(dir, 'nginx.conf')]);
}

const nginxHead = (dir: string): string => `pid ${dir}/nginx.pid;\nerror_log stderr warn;\nevents { worker_connections 64; }\n`;

t.test('nginx http configs are valid (nginx -t, in a temp prefix)', { skip: noNginx ?? false }, async (t) => {
  for (const file of ['nginx/jumpgate.conf', 'nginx/jumpgate-cluster.conf']) {
    const r = await nginxTest(
      (dir) =>
        `${nginxHead(dir)}http {\n  access_log off;\n  client_body_temp_path ${dir}/cb; proxy_temp_path ${dir}/p; fastcgi_temp_path ${dir}/f; uwsgi_temp_path ${dir}/u; scgi_temp_path ${dir}/s;\n  include ${join(DEPLOY, file)};\n}\n`,
    );
    t.ok(r.ok, `${file}: ${r.out.trim()}`);
  }
});

t.test('nginx stream config is valid (nginx -t, in a temp prefix)', { skip: noStream ?? false }, async (t) => {
  const r = await nginxTest(
    (dir) => `load_module ${NGINX_STREAM_MODULE};\n${nginxHead(dir)}stream {\n  include ${join(DEPLOY, 'nginx/jumpgate-stream.conf')};\n}\n`,
  );
  t.ok(r.ok, `nginx/jumpgate-stream.conf: ${r.out.trim()}`);
});

t.test("HAProxy's checks mark a stopping instance down within shutdown.readyDelayMs", async (t) => {
  const text = readFileSync(join(DEPLOY, 'haproxy/jumpgate-cluster.cfg'), 'utf8');
  const checks = [...text.matchAll(/^\s*default-server\s.*\binter (\d+)s\b.*\bfall (\d+)\b/gm)];
  t.ok(checks.length >= 2, 'both backends set inter and fall');
  for (const [, inter, fall] of checks) {
    const downMs = Number(inter) * 1000 * Number(fall);
    t.ok(
      downMs + 1000 <= DEFAULTS.shutdown.readyDelayMs,
      `fall ${fall} x inter ${inter}s = ${downMs} ms, + 1 s margin <= readyDelayMs ${DEFAULTS.shutdown.readyDelayMs}`,
    );
  }
  t.match(text, /option httpchk GET \/readyz/);
  t.notMatch(text.replace(/#.*$/gm, ''), /shutdown-sessions/, 'open connections are not cut when a server goes down');
  for (const line of text.split('\n').filter((l) => /^\s*server\s/.test(l)))
    t.match(line, new RegExp(`check port ${DEFAULTS.admin.port}\\b`), `health checked on the admin port: ${line.trim()}`);
});

const UNIT = join(DEPLOY, 'systemd/jumpgate.service');

t.test('systemd unit: the stop timeout covers the stop sequence', async (t) => {
  const text = readFileSync(UNIT, 'utf8');
  const value = (key: string): string | undefined => new RegExp(`^${key}=(.*)$`, 'm').exec(text)?.[1];
  t.equal(value('Type'), 'simple');
  t.equal(value('KillSignal'), 'SIGTERM');
  t.equal(value('Restart'), 'on-failure');
  t.notOk(value('MemoryDenyWriteExecute'), "no MemoryDenyWriteExecute (V8's JIT)");
  const stopSec = Number(/^(\d+)s?$/.exec(value('TimeoutStopSec') ?? '')?.[1]);
  const sequenceSec = (DEFAULTS.shutdown.readyDelayMs + DEFAULTS.limits.upstreamTimeoutMs) / 1000;
  t.ok(stopSec > sequenceSec + 5, `TimeoutStopSec ${stopSec} s > readyDelayMs + upstreamTimeoutMs (${sequenceSec} s) + 5 s`);
});

t.test('systemd unit: systemd-analyze verify', { skip: noSystemdAnalyze ?? false }, async (t) => {
  const r = await check('systemd-analyze', ['verify', UNIT]);
  t.ok(r.ok, `systemd-analyze verify: ${r.out.trim() || 'clean'}`);
  t.notMatch(r.out, /Unknown (key|section)|Failed to parse/, 'every directive known');
});

t.test('Prometheus job: /metrics on the admin port with the admin token as bearer', async (t) => {
  const cfg = parse(readFileSync(join(DEPLOY, 'prometheus/prometheus.yml'), 'utf8')) as {
    scrape_configs: {
      job_name: string;
      metrics_path: string;
      authorization: { type: string; credentials_file?: string };
      static_configs: { targets: string[] }[];
    }[];
  };
  const job = cfg.scrape_configs.find((j) => j.job_name === 'jumpgate');
  t.ok(job, 'a jumpgate job');
  t.equal(job!.metrics_path, '/metrics');
  t.equal(job!.authorization.type, 'Bearer');
  t.ok(job!.authorization.credentials_file, 'the token from a file');
  const targets = job!.static_configs.flatMap((s) => s.targets);
  t.ok(targets.length >= 2, 'several instances');
  for (const target of targets) t.match(target, new RegExp(`:${DEFAULTS.admin.port}$`), `${target} is an admin port`);
});
