// What one node knows while answering one request: its slot at each commitment (its own lag
// behind the cluster's tip), the cluster, its knobs. Context strings are rebuilt only when the
// node's processed slot moves, so the hot paths (getSlot, getBalance) only concatenate.

import { createHash } from 'node:crypto';
import { encodeBase58 } from '../../solana/base58.js';
import { blockHeightOf, blockhashOf, BLOCKHASH_VALID_SLOTS } from './chain.js';
import type { Cluster } from './cluster.js';
import type { SimKnobs } from './knobs.js';
import { Commitment, minContextSlotError, type Cfg } from './params.js';

export class MethodEnv {
  /** The node's slot per commitment (processed, confirmed, finalized). */
  readonly views = [-1, -1, -1];
  /** '"result":{"context":{…},"value":' per commitment. */
  readonly ctx = ['', '', ''];
  /** '"result":N' per commitment (getSlot). */
  readonly slotText = ['', '', ''];
  private readonly latest = ['', '', ''];
  private readonly idIdentity: string;
  private readonly keyIdentity: string;
  knobs: SimKnobs;
  cluster: Cluster;

  constructor(
    readonly id: string,
    knobs: SimKnobs,
    cluster: Cluster,
  ) {
    this.idIdentity = '"result":{"identity":' + JSON.stringify(id) + '}';
    this.keyIdentity = '"result":{"identity":"' + identityOf(id) + '"}';
    this.knobs = knobs;
    this.cluster = cluster;
  }

  /** getIdentity's answer: a pubkey; the node id in synthetic mode. */
  identity(): string {
    return this.knobs.synthetic ? this.idIdentity : this.keyIdentity;
  }

  /** Moves the views to the cluster's tip now, minus this node's lag. */
  refresh(force = false): void {
    const c = this.cluster;
    const k = this.knobs;
    const processed = c.produced(c.tip() - k.lag);
    if (processed === this.views[0] && !force) return;
    this.set(Commitment.Processed, processed);
    this.set(Commitment.Confirmed, c.produced(processed - k.confirmDepth));
    this.set(Commitment.Finalized, c.produced(processed - k.finalizeDepth));
  }

  private set(c: Commitment, slot: number): void {
    this.views[c] = slot;
    this.ctx[c] = '"result":{"context":{"apiVersion":"2.1.0","slot":' + slot + '},"value":';
    this.slotText[c] = '"result":' + slot;
    this.latest[c] = '';
  }

  get processed(): number {
    return this.views[Commitment.Processed]!;
  }

  /** The slot a request reads at, or Agave's -32016 when minContextSlot is ahead of it. */
  slotFor(cfg: Cfg): number | string {
    const s = this.views[cfg.commitment]!;
    return cfg.minContextSlot > s ? minContextSlotError(s) : s;
  }

  /** Slots behind the cluster, when the node counts as unhealthy; -1 when healthy. */
  behind(): number {
    return this.knobs.lag > this.knobs.healthSlots ? this.knobs.lag : -1;
  }

  latestBlockhash(c: Commitment): string {
    if (this.latest[c] === '') {
      const slot = this.views[c]!;
      this.latest[c] = this.ctx[c] + '{"blockhash":"' + blockhashOf(slot) + '","lastValidBlockHeight":' + (blockHeightOf(slot) + BLOCKHASH_VALID_SLOTS) + '}}';
    }
    return this.latest[c]!;
  }

  /** The first slot whose block this node still has (archiveSlots). */
  firstAvailable(): number {
    return this.knobs.archiveSlots > 0 ? Math.max(0, this.processed - this.knobs.archiveSlots) : 0;
  }
}

/** A node's identity: a pubkey derived from its id, so a restarted node keeps it. */
function identityOf(id: string): string {
  return encodeBase58(
    createHash('sha256')
      .update('jumpgate-sim-identity:' + id)
      .digest(),
  );
}
