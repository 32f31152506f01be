// How `jumpgate start` stops on a signal (docs/instances.md "Running several instances", "The stop
// sequence"). Behind a balancer the order matters: a gateway that closed its port the moment
// it got SIGTERM would reset the connections the balancer routed to it before its health check
// noticed anything. So:
//
// 1. SIGTERM: /readyz answers 503 at once and answers carry `Connection: close`, but the port
//    stays open and every request is served for `shutdown.readyDelayMs`, long enough for the
//    balancer to see the 503s and stop sending new connections here;
// 2. then the port closes, in-flight requests finish (up to `limits.upstreamTimeoutMs`), the
//    last usage is written and the process exits 0.
//
// SIGINT (Ctrl-C, usually no balancer) skips the wait. A second signal during either phase
// means "now": what is in flight is dropped, the usage counted so far is still written (within
// FORCED_STOP_MS), exit 1. A third exits at once.

import type { Logger } from '../log.js';
import type { Gateway } from './start-gateway.js';

/** A forced stop that takes longer than this exits anyway. */
export const FORCED_STOP_MS = 5000;

export type StopSignal = 'SIGTERM' | 'SIGINT';

type Phase = 'running' | 'waiting' | 'draining' | 'forced';

export interface GracefulStopOptions {
  log: Logger;
  /** Ends the process (tests pass their own). */
  exit(code: number): void;
  /** Runs after the gateway stopped, before the exit (the demo's simulated nodes). */
  after?: () => Promise<void>;
}

export class GracefulStop {
  private phase: Phase = 'running';
  /** Ends the ready delay early (a second signal). */
  private cutWait: (() => void) | null = null;

  constructor(
    private readonly gw: Pick<Gateway, 'config' | 'unready' | 'drain' | 'close'>,
    private readonly opts: GracefulStopOptions,
  ) {}

  get stopping(): boolean {
    return this.phase !== 'running';
  }

  signal(signal: StopSignal): void {
    if (this.phase === 'running') void this.graceful(signal);
    else if (this.phase === 'forced') this.opts.exit(1);
    else this.force(signal);
  }

  private async graceful(signal: StopSignal): Promise<void> {
    const { log } = this.opts;
    const delayMs = signal === 'SIGTERM' ? this.gw.config.shutdown.readyDelayMs : 0;
    this.phase = 'waiting';
    this.gw.unready();
    if (delayMs > 0) {
      log.info({ signal, readyDelayMs: delayMs }, 'stopping: /readyz answers 503; still serving until the balancer has noticed');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delayMs);
        this.cutWait = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.cutWait = null;
      if (this.phase !== 'waiting') return;
    } else log.info({ signal }, 'stopping');
    this.phase = 'draining';
    let code = 0;
    try {
      await this.gw.drain();
    } catch (err) {
      log.error({ err }, 'stopping failed');
      code = 1;
    }
    if (this.phase !== 'draining') return;
    await this.opts.after?.().catch((err: unknown) => log.warn({ err }, 'stopping failed'));
    this.opts.exit(code);
  }

  private force(signal: StopSignal): void {
    const { log } = this.opts;
    this.phase = 'forced';
    log.warn({ signal }, 'second signal: stopping now (requests in flight are dropped; a third signal exits at once)');
    this.cutWait?.();
    const timer = setTimeout(() => this.opts.exit(1), FORCED_STOP_MS);
    void this.gw
      .close()
      .catch((err: unknown) => log.error({ err }, 'stopping failed'))
      .then(() => this.opts.after?.())
      .catch((err: unknown) => log.warn({ err }, 'stopping failed'))
      .finally(() => {
        clearTimeout(timer);
        this.opts.exit(1);
      });
  }
}
