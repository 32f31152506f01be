// `jumpgate nodes …`: list the nodes of a running gateway, change a node's weight, drain or
// undrain it, through the admin API (admin-client.ts).

import { adminApi, parseAdminArgs, runAdminCommand } from './admin-client.js';
import { UsageError } from './usage-error.js';

interface NodeRow {
  id: string;
  state: string;
  weight: number;
  drained: boolean;
  slot: number | null;
  lag: number | null;
  inflight: number;
  rps: number;
  latency: { count: number; p50: number | null; p99: number | null };
}

const dash = (v: number | null | undefined): string => (v === null || v === undefined ? '-' : String(v));

export function nodesTable(rows: readonly NodeRow[]): string {
  const head = ['ID', 'STATE', 'WEIGHT', 'DRAINED', 'SLOT', 'LAG', 'REQ/S', 'INFLIGHT', 'P50 MS', 'P99 MS'];
  const body = rows.map((n) => [
    n.id,
    n.state,
    String(n.weight),
    n.drained ? 'yes' : 'no',
    dash(n.slot),
    dash(n.lag),
    String(Math.round(n.rps)),
    String(n.inflight),
    n.latency.count === 0 ? '-' : dash(n.latency.p50),
    n.latency.count === 0 ? '-' : dash(n.latency.p99),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  return [head, ...body].map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}

function oneNode(n: NodeRow): string {
  return `node ${n.id}: weight ${n.weight}, ${n.drained ? 'drained' : 'not drained'}, state ${n.state}`;
}

function wantArgs(pos: string[], n: number, usage: string): void {
  if (pos.length !== n) throw new UsageError(`expected: ${usage}`);
}

async function nodes(argv: string[]): Promise<void> {
  const { positionals: pos, target, json } = parseAdminArgs(argv, { json: { type: 'boolean' } });
  const [sub, ...args] = pos;
  if (sub === undefined || sub === 'list') {
    if (sub === 'list') wantArgs(args, 0, 'jumpgate nodes list');
    const rows = (await adminApi(target, 'GET', '/admin/nodes')) as NodeRow[];
    process.stdout.write((json ? JSON.stringify(rows, null, 2) : nodesTable(rows)) + '\n');
    return;
  }
  let patch: { weight?: number; drained?: boolean };
  switch (sub) {
    case 'set-weight': {
      wantArgs(args, 2, 'jumpgate nodes set-weight ID WEIGHT');
      const w = Number(args[1]);
      if (args[1]!.trim() === '' || !Number.isFinite(w) || w < 0) throw new UsageError(`WEIGHT must be a number >= 0, got "${args[1]}"`);
      patch = { weight: w };
      break;
    }
    case 'drain':
    case 'undrain':
      wantArgs(args, 1, `jumpgate nodes ${sub} ID`);
      patch = { drained: sub === 'drain' };
      break;
    default:
      throw new UsageError(`unknown nodes command "${sub}"`);
  }
  const row = (await adminApi(target, 'PATCH', '/admin/nodes/' + encodeURIComponent(args[0]!), patch)) as NodeRow;
  process.stdout.write((json ? JSON.stringify(row, null, 2) : oneNode(row)) + '\n');
}

export const runNodesCli = (argv: string[]): Promise<void> => runAdminCommand('nodes', nodes, argv);
