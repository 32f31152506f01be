// Label routing (docs/routing.md "Label routing"): `routing.methods` sends calls of a method only to
// nodes whose labels match all the given ones. Built once per config and node set, so a call
// pays one Map lookup (none while no rule is configured) and a node check is one array read.

import type { GatewayErrorSpec } from '../errors.js';
import { Errors } from '../errors.js';

export interface MethodRuleConfig {
  labels: Record<string, string>;
  fallback: 'any' | 'none';
}

export interface LabelledNode {
  readonly labels?: Readonly<Record<string, string>> | undefined;
}

export class MethodRule {
  /** allowed[i] = 1 when node i carries every label. */
  readonly allowed: Uint8Array;
  /** Bits of the nodes without the labels: default routing excludes them like tried nodes. */
  readonly exclude: number;
  /** No matching node usable: route among all nodes (true) or refuse with `error` (false). */
  readonly fallbackAny: boolean;
  /** 7503 naming the method and labels (one object per rule, not per refusal). */
  readonly error: GatewayErrorSpec;
  readonly data: Record<string, unknown>;

  constructor(method: string, rule: MethodRuleConfig, nodes: readonly (LabelledNode & { bit: number })[]) {
    const wanted = Object.entries(rule.labels);
    this.allowed = new Uint8Array(nodes.length);
    let exclude = 0;
    nodes.forEach((n, i) => {
      const ok = wanted.every(([k, v]) => n.labels?.[k] === v);
      this.allowed[i] = ok ? 1 : 0;
      if (!ok) exclude |= n.bit;
    });
    // Nodes past the 31st share a bit: never exclude one that has the labels.
    nodes.forEach((n, i) => {
      if (this.allowed[i] === 1) exclude &= ~n.bit;
    });
    this.exclude = exclude;
    this.fallbackAny = rule.fallback === 'any';
    const shown = wanted.map(([k, v]) => `${k}=${v}`).join(', ');
    this.error = { code: Errors.noNode.code, http: Errors.noNode.http, message: `No node with labels ${shown} is available for ${method}` };
    this.data = { attempts: 0, method, labels: rule.labels };
  }
}

/** The rules of `routing.methods` for this node list; empty when none is configured. */
export function buildMethodRules(
  config: Readonly<Record<string, MethodRuleConfig>>,
  nodes: readonly (LabelledNode & { bit: number })[],
): Map<string, MethodRule> {
  const rules = new Map<string, MethodRule>();
  for (const [method, rule] of Object.entries(config)) rules.set(method, new MethodRule(method, rule, nodes));
  return rules;
}

/** What grouping reads of a batch plan (rpc/analyze.ts BatchPlan). */
export interface PlannedMethods {
  readonly methods: readonly string[];
}

/**
 * Default-mode batches with calls of label-routed methods: the forwarded elements `order`,
 * reordered so that each routed method's calls are together (the rest first, each group in
 * request order), and where each sub-batch ends: at most `size` calls, never two routes in
 * one. Null when no call of the batch is label-routed (the batch is split as usual).
 */
export function routeRuns(plan: PlannedMethods, order: Int32Array, size: number, routed: ReadonlySet<string>): { order: Int32Array; ends: number[] } | null {
  const m = plan.methods;
  let any = false;
  for (let k = 0; k < order.length && !any; k++) any = routed.has(m[order[k]!]!);
  if (!any) return null;
  const groups = new Map<string, number[]>([['', []]]);
  for (const i of order) {
    const key = routed.has(m[i]!) ? m[i]! : '';
    let g = groups.get(key);
    if (g === undefined) groups.set(key, (g = []));
    g.push(i);
  }
  const out = new Int32Array(order.length);
  const ends: number[] = [];
  let at = 0;
  for (const g of groups.values()) {
    for (let k = 0; k < g.length; k += size) {
      const end = Math.min(k + size, g.length);
      for (let j = k; j < end; j++) out[at++] = g[j]!;
      ends.push(at);
    }
  }
  return { order: out, ends };
}
