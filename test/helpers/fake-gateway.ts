// A Serving for driving the request core (src/gateway/exchange.ts) without listeners: real
// settings, limiter, offload (no workers) and meter, a fake router, and a Responder that
// records what it was told to answer.

import { resolveConfig } from '../../src/config/load.js';
import { Offload } from '../../src/gateway/offload.js';
import type { Responder } from '../../src/gateway/responder.js';
import { Serving } from '../../src/gateway/serving.js';
import { staticTokenRecord, TokenTable, type TokenRecord } from '../../src/gateway/token-table.js';
import { silentLogger } from '../../src/log.js';
import type { Router } from '../../src/upstream/router.js';

export const TOKEN: TokenRecord = staticTokenRecord('unit-token-0123456789abcdef', 'test', true);

export interface Answer {
  status: string;
  body: string;
  nodeIds: string;
  close: boolean;
  retryAfter: string;
}

export class FakeResponder implements Responder {
  readonly answers: Answer[] = [];
  ipReads = 0;

  /** Answers go whole, as on a WebSocket. */
  readonly streams = false;

  constructor(readonly ip = '198.51.100.7') {}

  stream(): never {
    throw new Error('answers go whole here');
  }

  answer(status: string, body: string | Buffer, nodeIds: string, close: boolean, retryAfter: string): void {
    this.answers.push({ status, body: body.toString(), nodeIds, close, retryAfter });
  }

  clientIp(): string {
    this.ipReads++;
    return this.ip;
  }
}

/** Slots as the keymap would give them, but readable: the key's length. */
export const lengthSlots = { slot: (key: string): number => key.length };

/** `config` is merged over a one-node config (the router decides where calls go anyway). */
export function testServing(router: Router, config: Record<string, unknown> = {}): Serving {
  const c = resolveConfig({ nodes: [{ id: 'n0', url: 'http://127.0.0.1:1' }], ...config });
  const offload = new Offload({ threads: 0, parseThresholdBytes: c.offload.parseThresholdBytes, mergeThresholdBytes: c.offload.mergeThresholdBytes });
  return new Serving(c, { tokens: new TokenTable(), router, offload, log: silentLogger(), slots: lengthSlots });
}
