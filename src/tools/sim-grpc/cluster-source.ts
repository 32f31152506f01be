// A simulated node's own Yellowstone gRPC source (docs/grpc.md "Simulated sources"): the
// cluster's events (./cluster-feed.ts) on the node's clock (its processed slot is the cluster's
// tip minus its lag), with the per-source knobs of any simulated source (delay, jitter, drops,
// stalls). `jumpgate sim --grpc-port P` starts one per node.

import { ROOT_DISTANCE } from '../sim/chain.js';
import type { SimNode } from '../sim/node.js';
import { ClusterFeed } from './cluster-feed.js';
import { startSimGrpcSource, type SimGrpcKnobs, type SimGrpcSource } from './server.js';

export interface ClusterGrpcOptions {
  host?: string;
  port?: number;
  knobs?: Partial<SimGrpcKnobs>;
  /** Seed of the knobs' randomness; give each source its own so their delays are independent. */
  seed?: number;
  xToken?: string;
}

export function startClusterGrpcSource(node: SimNode, opts: ClusterGrpcOptions = {}): Promise<SimGrpcSource> {
  const feed = new ClusterFeed(node.cluster, () => node.knobs());
  return startSimGrpcSource({
    ...opts,
    slotMs: node.cluster.slotMs,
    feed,
    // The shared clock names the cluster's finalized slot; its tip is ROOT_DISTANCE ahead.
    slotOffset: () => ROOT_DISTANCE - node.knobs().lag,
  });
}
