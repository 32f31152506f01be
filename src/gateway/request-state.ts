// The request path's own mutable state: not configuration, so a reload never touches it.

export class RequestState {
  /** Requests accepted and not yet answered or aborted. */
  inflight = 0;
  /** While draining for shutdown (or after unready()), answers carry `Connection: close`. */
  draining = false;
  /** Called once when `inflight` drops to 0 during a drain. */
  onIdle: (() => void) | null = null;

  /** A request left the in-flight set. */
  left(): void {
    if (--this.inflight === 0 && this.onIdle !== null) this.onIdle();
  }
}
