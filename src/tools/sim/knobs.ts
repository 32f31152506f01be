// Knobs are set from three places (startSim, POST /sim/control, the CLI), so validation
// lives here once and its errors name the knob.

import { feeMarketError, type FeeMarket } from './fee-market.js';

export type FailMode = 'http500' | 'rpc-error' | 'mixed';

export interface SimKnobs {
  /** The slot advances every slotMs. */
  slotMs: number;
  /** Slots behind the true slot. */
  lag: number;
  /** Uniform random added latency; [0,0] answers synchronously. */
  latencyMs: [number, number];
  /** Fraction of requests that fail (per failMode). */
  failRate: number;
  /** rpc-error: HTTP 200 with Solana's -32005; mixed: half each. */
  failMode: FailMode;
  /** Fraction of requests accepted and never answered. */
  stallRate: number;
  /** Fraction of requests whose connection is closed without a response. */
  dropRate: number;
  /** getHealth answers Solana's -32005 "Node is unhealthy". */
  unhealthy: boolean;
  /** WS refused (upgrades answer 503); turning it on closes open WS connections (1001). */
  wsDrop: boolean;
  /**
   * Fraction of RPC requests answered `slowMs` later than the rest (tail latency, for hedged
   * reads). Health probes (the gateway's prober, and any getHealth) are never slowed.
   */
  slowRate: number;
  /** Extra delay of a slowed request, at most MAX_SLOW_MS: slow, never stalled. */
  slowMs: number;
  /** Only requests calling one of these methods are slowed; [] = any method. */
  slowMethods: string[];
  /** Slots confirmed trails processed. */
  confirmDepth: number;
  /** Slots finalized trails processed (32 on mainnet). */
  finalizeDepth: number;
  /** A transaction this node accepts lands after this many ms (forwarding to the leader). */
  landingMs: number;
  /** Fraction of accepted transactions that never land. */
  txDropRate: number;
  /** Slots of block history the node keeps; 0 keeps everything (an archive node). */
  archiveSlots: number;
  /**
   * Blocks below the first available one come from long-term storage (BigTable): a skipped slot
   * there answers -32009 instead of -32001.
   */
  longTermStorage: boolean;
  /** The node is unhealthy ("behind") when its lag exceeds this, as Agave's health check. */
  healthSlots: number;
  /**
   * The benchmark mode: keys the ledger never touched answer a deterministic account instead of
   * null, any key string is accepted, bytes that are no transaction are acknowledged with a
   * signature, and getIdentity names the node id (docs/simulator.md "Synthetic mode").
   */
  synthetic: boolean;
  /** Fraction of slots skipped by their leader; a property of the cluster. */
  skipRate: number;
  /** Synthetic fee-paying transactions in every block (docs/simulator.md "Fee market"); null: none. */
  feeMarket: FeeMarket | null;
  /**
   * A provider's rate limit: credits per second (bursting one second's worth); over it a
   * request is answered HTTP 429 with Retry-After and a provider-style JSON body. 0: no cap.
   * The gateway's health probes are not counted.
   */
  rateCap: number;
  /** Credits a call of the method costs against rateCap (others: 1). */
  methodCosts: Record<string, number>;
  /** Methods the provider disabled: answered -32601 "Method not found" (Agave's shape). */
  disabledMethods: string[];
}

export const DEFAULT_KNOBS: Readonly<SimKnobs> = Object.freeze({
  slotMs: 400,
  lag: 0,
  latencyMs: [0, 0] as [number, number],
  failRate: 0,
  failMode: 'mixed' as FailMode,
  stallRate: 0,
  dropRate: 0,
  unhealthy: false,
  wsDrop: false,
  slowRate: 0,
  slowMs: 0,
  slowMethods: [] as string[],
  confirmDepth: 1,
  finalizeDepth: 32,
  landingMs: 0,
  txDropRate: 0,
  archiveSlots: 0,
  longTermStorage: false,
  healthSlots: 128,
  synthetic: false,
  skipRate: 0,
  feeMarket: null as FeeMarket | null,
  rateCap: 0,
  methodCosts: {} as Record<string, number>,
  disabledMethods: [] as string[],
});

/** slowMs at most: a slowed request is still answered. */
export const MAX_SLOW_MS = 60_000;

export const KNOB_NAMES = Object.keys(DEFAULT_KNOBS) as (keyof SimKnobs)[];
const FAIL_MODES: readonly string[] = ['http500', 'rpc-error', 'mixed'];

export class KnobError extends Error {
  constructor(
    readonly knob: string,
    message: string,
  ) {
    super(message);
  }
}

function rate(name: string, v: unknown): number {
  if (typeof v !== 'number' || !(v >= 0 && v <= 1)) throw new KnobError(name, `${name} must be a number from 0 to 1`);
  return v;
}

function uint(name: string, v: unknown, min: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min) {
    throw new KnobError(name, `${name} must be an integer >= ${min}`);
  }
  return v;
}

/** Checks a partial knob object (undefined members are ignored); throws KnobError. */
export function checkKnobs(input: unknown): Partial<SimKnobs> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new KnobError('', 'knobs must be a JSON object');
  }
  const out: Partial<SimKnobs> = {};
  for (const [k, v] of Object.entries(input)) {
    if (v === undefined) continue;
    switch (k) {
      case 'slotMs':
        out.slotMs = uint(k, v, 1);
        break;
      case 'lag':
      case 'confirmDepth':
      case 'finalizeDepth':
      case 'landingMs':
      case 'archiveSlots':
      case 'healthSlots':
        out[k] = uint(k, v, 0);
        break;
      case 'latencyMs': {
        const ok = Array.isArray(v) && v.length === 2 && v.every((x) => typeof x === 'number' && x >= 0 && Number.isFinite(x));
        if (!ok || v[0] > v[1]) throw new KnobError(k, 'latencyMs must be [min, max] with 0 <= min <= max');
        out.latencyMs = [v[0], v[1]];
        break;
      }
      case 'slowMs':
        out.slowMs = uint(k, v, 0);
        if (v > MAX_SLOW_MS) throw new KnobError(k, `slowMs must be at most ${MAX_SLOW_MS}`);
        break;
      case 'rateCap':
        if (typeof v !== 'number' || !(v >= 0) || !Number.isFinite(v)) throw new KnobError(k, 'rateCap must be a number >= 0');
        out.rateCap = v;
        break;
      case 'methodCosts': {
        const ok =
          typeof v === 'object' &&
          v !== null &&
          !Array.isArray(v) &&
          Object.keys(v).length <= 100 &&
          Object.values(v).every((c) => typeof c === 'number' && c > 0 && Number.isFinite(c));
        if (!ok) throw new KnobError(k, 'methodCosts must map method names to numbers > 0');
        out.methodCosts = { ...(v as Record<string, number>) };
        break;
      }
      case 'disabledMethods':
        if (!Array.isArray(v) || v.length > 100 || !v.every((m) => typeof m === 'string' && m.length > 0 && m.length <= 128)) {
          throw new KnobError(k, 'disabledMethods must be a list of method names');
        }
        out.disabledMethods = [...(v as string[])];
        break;
      case 'slowMethods':
        if (!Array.isArray(v) || v.length > 100 || !v.every((m) => typeof m === 'string' && m.length > 0 && m.length <= 128)) {
          throw new KnobError(k, 'slowMethods must be a list of method names');
        }
        out.slowMethods = [...(v as string[])];
        break;
      case 'failRate':
      case 'slowRate':
      case 'stallRate':
      case 'dropRate':
      case 'txDropRate':
      case 'skipRate':
        out[k] = rate(k, v);
        break;
      case 'failMode':
        if (typeof v !== 'string' || !FAIL_MODES.includes(v)) {
          throw new KnobError(k, `failMode must be one of ${FAIL_MODES.join(', ')}`);
        }
        out.failMode = v as FailMode;
        break;
      case 'unhealthy':
      case 'wsDrop':
      case 'synthetic':
      case 'longTermStorage':
        if (typeof v !== 'boolean') throw new KnobError(k, `${k} must be true or false`);
        out[k] = v;
        break;
      case 'feeMarket': {
        const bad = feeMarketError(v);
        if (bad !== null) throw new KnobError(k, bad);
        out.feeMarket = v as FeeMarket | null;
        break;
      }
      default:
        throw new KnobError(k, `unknown knob ${k}`);
    }
  }
  const confirm = out.confirmDepth;
  const finalize = out.finalizeDepth;
  if (confirm !== undefined && finalize !== undefined && confirm > finalize) throw new KnobError('confirmDepth', 'confirmDepth must be at most finalizeDepth');
  return out;
}
