// Node kinds (docs/jito.md): `rpc` nodes take RPC traffic; `jito` block engines take only the
// bundle methods and never enter the node pool.

interface Kinded {
  kind?: 'rpc' | 'jito' | undefined;
}

/** The nodes that take RPC traffic. */
export function rpcNodes<N extends Kinded>(nodes: readonly N[]): N[] {
  return nodes.filter((n) => n.kind !== 'jito');
}

/** The Jito block engines among `nodes`. */
export function jitoNodes<N extends Kinded>(nodes: readonly N[]): N[] {
  return nodes.filter((n) => n.kind === 'jito');
}
