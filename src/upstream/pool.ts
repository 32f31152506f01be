// The node pool: upstream nodes, the router the hot path asks for a node, and the health loop.

import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { pickNode } from '../routing/select.js';
import type { Router, UpstreamCall } from './call.js';
import { HealthChecker } from './health.js';
import { UpstreamNode } from './node.js';

export class NodePool implements Router {
  nodes: UpstreamNode[];
  maxAttempts: number;
  readonly health: HealthChecker;

  constructor(config: Config, private readonly log: Logger) {
    this.maxAttempts = config.routing.maxAttempts;
    const connectTimeout = Math.min(config.limits.upstreamTimeoutMs, 10_000);
    this.nodes = config.nodes.map((spec, i) => new UpstreamNode(spec, i, config.health, connectTimeout));
    this.health = new HealthChecker(() => this.nodes, { chain: config.chain, ...config.health }, {
      stateChanged: (node, from, reason) => this.log.warn({ node: node.id, from, to: node.state, reason: reason || undefined, slot: node.slot }, 'node state changed'),
    });
  }

  route(call: UpstreamCall): UpstreamNode | null {
    return pickNode(this.nodes, call.tried);
  }

  byId(id: string): UpstreamNode | undefined {
    return this.nodes.find((n) => n.id === id);
  }

  /** First probe round before traffic, then every interval. */
  async start(): Promise<void> {
    await this.health.round();
    this.health.start();
  }

  async close(): Promise<void> {
    this.health.stop();
    await Promise.all(this.nodes.map((n) => n.close().catch(() => n.destroy())));
  }
}
