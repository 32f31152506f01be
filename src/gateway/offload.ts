// Chooses between inline work and the piscina pool for parsing large bodies and merging large
// batch answers. Large request bodies are received straight into SharedArrayBuffer memory so
// the worker reads them without a copy (body-memory.ts). Thresholds come from
// `npm run bench -- parse` (see docs/benchmarks.md "Offload pool threshold"). `offload.*` take
// effect on a restart: a reload leaves the pool and its thresholds as they are.

import { Piscina } from 'piscina';
import { analyze, type Analysis, type BatchPlan } from '../rpc/analyze.js';
import { assembleBatch, type Assembled, type SubOutcome } from '../rpc/batch.js';

export interface OffloadOptions {
  threads: number;
  parseThresholdBytes: number;
  mergeThresholdBytes: number;
}

const WORKER_URL = new URL('../../offload-tasks/rpc.js', import.meta.url);

function asBuffer(u: Uint8Array): Buffer {
  return Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}

export class Offload {
  readonly parseThreshold: number;
  readonly mergeThreshold: number;
  readonly pool: Piscina | null;

  constructor(opts: OffloadOptions) {
    // Threads start on the first large body (and leave after a minute idle): a gateway that
    // never sees one keeps the thread's memory (~10–15 MB idle RSS) for something else.
    this.pool =
      opts.threads > 0
        ? new Piscina({
            filename: WORKER_URL.href,
            minThreads: 0,
            maxThreads: opts.threads,
            maxQueue: Math.max(4, opts.threads * opts.threads * 4),
            idleTimeout: 60_000,
          })
        : null;
    this.parseThreshold = this.pool === null ? Infinity : opts.parseThresholdBytes;
    this.mergeThreshold = this.pool === null ? Infinity : opts.mergeThresholdBytes;
  }

  offloadParse(size: number): boolean {
    return size >= this.parseThreshold && this.hasRoom();
  }

  offloadMerge(size: number): boolean {
    return size >= this.mergeThreshold && this.hasRoom();
  }

  /** A full queue means the workers are the bottleneck: do the work inline instead of waiting. */
  private hasRoom(): boolean {
    const p = this.pool!;
    return p.queueSize < p.options.maxQueue;
  }

  analyzeInline(body: Buffer, maxBatch: number): Analysis {
    return analyze(body, maxBatch);
  }

  analyze(body: Buffer, maxBatch: number): Promise<Analysis> {
    return this.pool!.run({ body, maxBatch }, { name: 'analyzeTask' }) as Promise<Analysis>;
  }

  /** `order` is null for a batch forwarded with its ids kept (see rpc/batch.ts). */
  assembleInline(body: Buffer, plan: BatchPlan, order: Int32Array | null, outcomes: readonly SubOutcome[]): Assembled {
    return assembleBatch(body, plan, order, outcomes);
  }

  async assemble(body: Buffer, plan: BatchPlan, order: Int32Array | null, outcomes: readonly SubOutcome[]): Promise<Assembled> {
    type Answer = Uint8Array | { merged: Uint8Array | null; answered: boolean; errors: Uint8Array | null } | { asAnswered: number; errors: Uint8Array | null };
    const r = (await this.pool!.run({ body, plan, order, outcomes }, { name: 'assembleTask' })) as Answer;
    if (r instanceof Uint8Array) return { merged: asBuffer(r), answered: true, errors: null };
    // The node's own answer is the client's: the worker only checked it, its bytes stay here.
    if ('asAnswered' in r) return { merged: outcomes[r.asAnswered]!.response, answered: true, errors: r.errors };
    return { merged: r.merged === null ? null : asBuffer(r.merged), answered: r.answered, errors: r.errors };
  }

  async close(): Promise<void> {
    if (this.pool !== null) await this.pool.destroy();
  }
}
