// How the parts of a running gateway stop, in one ordered list. Each part registers its stop
// as soon as it has started; a failed start and a shutdown run the same list, newest first, so
// a part stops before the parts it was built on (the client listener before the usage flush,
// the flush before the store, everything routing through the pool before the pool).

type Stop = () => void | Promise<void>;

export class StopList {
  private readonly stops: Stop[] = [];
  private running: Promise<void> | null = null;

  /** Registers how a part that just started stops; it will stop before every part added earlier. */
  add(stop: Stop): void {
    this.stops.push(stop);
  }

  /**
   * Stops every part, newest first, each awaited before the next. A failing stop does not keep
   * the others from running (they must still be released); the first failure is thrown once
   * all have run. Later calls return the same promise.
   */
  run(): Promise<void> {
    return (this.running ??= this.runAll());
  }

  private async runAll(): Promise<void> {
    let failed = false;
    let failure: unknown;
    for (let i = this.stops.length - 1; i >= 0; i--) {
      try {
        await this.stops[i]!();
      } catch (err) {
        if (!failed) failure = err;
        failed = true;
      }
    }
    if (failed) throw failure;
  }
}
