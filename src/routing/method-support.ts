// Which nodes serve a method (docs/routing.md "Unsupported methods"): `nodes[].methods` (only |
// except) from the config, and what nodes taught by answering "method not found" or a
// provider's "method disabled" code: such a node is not asked that method again for
// `routing.unsupportedMs`. Both are bit masks in the shape of a call's tried mask, so a pick
// pays one Map lookup per table in use (none while nothing is configured or learned).

export interface MethodListConfig {
  only?: string[] | undefined;
  except?: string[] | undefined;
}

export interface SupportNode {
  readonly bit: number;
}

/**
 * Answer codes that mean "this node does not serve this method", whatever the params: JSON-RPC's
 * -32601 (Agave's "Method not found"), and providers' "method disabled / not on your plan" codes
 * (-32604 method disabled, -32052 plan does not include the method).
 */
export const UNSUPPORTED_CODES: readonly number[] = [-32601, -32604, -32052];

/** Learned (method, node) exclusions kept at most: method names come from clients. */
export const MAX_LEARNED = 4096;

export function isUnsupportedCode(code: number): boolean {
  return code === -32601 || code === -32604 || code === -32052;
}

class Learned {
  bits = 0;
  /** Per node index: performance.now() until which it is excluded. */
  readonly until: Float64Array;
  constructor(count: number) {
    this.until = new Float64Array(count);
  }
}

export class MethodSupport {
  /** Nodes with an `only` list: excluded for every method not in it. */
  private onlyBits = 0;
  /** Method → nodes excluded for it by the config (only lists that lack it, except lists that have it). */
  private fixed = new Map<string, number>();
  private learned = new Map<string, Learned>();
  private nodes: readonly SupportNode[] = [];
  private entries = 0;

  constructor(public forMs: number) {}

  /** From the config's node lists, for this node set (a reload calls it again; learned entries are dropped when the set changes). */
  configure(lists: readonly (MethodListConfig | undefined)[], nodes: readonly SupportNode[], forMs: number): void {
    this.forMs = forMs;
    if (nodes !== this.nodes) {
      this.learned = new Map();
      this.entries = 0;
    }
    this.nodes = nodes;
    let onlyBits = 0;
    const named = new Set<string>();
    lists.forEach((l) => {
      for (const m of l?.only ?? []) named.add(m);
      for (const m of l?.except ?? []) named.add(m);
    });
    const fixed = new Map<string, number>();
    lists.forEach((l, i) => {
      if (l?.only !== undefined) onlyBits |= nodes[i]!.bit;
    });
    for (const m of named) {
      let bits = 0;
      lists.forEach((l, i) => {
        const out = (l?.only !== undefined && !l.only.includes(m)) || (l?.except?.includes(m) ?? false);
        if (out) bits |= nodes[i]!.bit;
      });
      // Nodes past the 31st share a bit: never exclude one that serves the method.
      lists.forEach((l, i) => {
        const out = (l?.only !== undefined && !l.only.includes(m)) || (l?.except?.includes(m) ?? false);
        if (!out) bits &= ~nodes[i]!.bit;
      });
      fixed.set(m, bits);
    }
    this.onlyBits = onlyBits;
    this.fixed = fixed;
  }

  /** Nodes the config keeps `method` from. */
  configured(method: string): number {
    if (this.fixed.size === 0) return this.onlyBits;
    const b = this.fixed.get(method);
    return b === undefined ? this.onlyBits : b;
  }

  /** Nodes that said they do not serve `method`, as of `now` (performance.now()). */
  learnedBits(method: string, now: number): number {
    if (this.entries === 0) return 0;
    const l = this.learned.get(method);
    if (l === undefined) return 0;
    let bits = l.bits;
    if (bits === 0) return 0;
    const u = l.until;
    for (let i = 0; i < u.length; i++) {
      if (u[i]! !== 0 && u[i]! <= now) {
        u[i] = 0;
        bits &= ~this.nodes[i]!.bit;
        this.entries--;
      }
    }
    l.bits = bits;
    return bits;
  }

  /** Node `index` answered that it does not serve `method`: false when it was known already or the table is full. */
  learn(method: string, index: number, now: number): boolean {
    if (this.forMs <= 0 || index < 0 || index >= this.nodes.length) return false;
    let l = this.learned.get(method);
    if (l === undefined) {
      if (this.learned.size >= MAX_LEARNED) return false;
      l = new Learned(this.nodes.length);
      this.learned.set(method, l);
    }
    const fresh = l.until[index] === 0;
    l.until[index] = now + this.forMs;
    l.bits |= this.nodes[index]!.bit;
    if (fresh) this.entries++;
    return fresh;
  }

  /** What was learned and is still in force: node index → methods, for the admin API. */
  learnedOf(index: number, now: number): string[] {
    const out: string[] = [];
    for (const [m, l] of this.learned) if (l.until[index]! > now) out.push(m);
    return out;
  }
}
