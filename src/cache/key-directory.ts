// Which keys the cache holds, decided on the control plane from the reads the data planes
// report: a key read `hotAfterReads` times (each read within `idleMs` of the last) becomes
// held; a held key not read for `idleMs` is dropped; over `maxBytes` the least recently read
// go first. Keys read but not (yet) held are remembered in a bounded map, least recently read
// out first: a million keys read once cost the same memory as a few.

export interface DirectoryOptions {
  hotAfterReads: number;
  idleMs: number;
  maxKeys: number;
}

interface Cold {
  reads: number;
  last: number;
}

export class KeyDirectory {
  /** Held keys → when last read; Map order is least recently read first. */
  private readonly held = new Map<string, number>();
  private readonly cold = new Map<string, Cold>();
  private readonly maxCold: number;

  constructor(private opts: DirectoryOptions) {
    this.maxCold = Math.max(1024, opts.maxKeys * 2);
  }

  reconfigure(opts: DirectoryOptions): void {
    this.opts = opts;
  }

  get size(): number {
    return this.held.size;
  }

  get coldSize(): number {
    return this.cold.size;
  }

  has(key: string): boolean {
    return this.held.has(key);
  }

  /** `reads` reads of `key` at `now`; true when the key became hot (the caller holds it and calls `hold`). */
  read(key: string, reads: number, now: number): boolean {
    if (this.held.has(key)) {
      this.held.delete(key);
      this.held.set(key, now);
      return false;
    }
    let c = this.cold.get(key);
    if (c === undefined || now - c.last > this.opts.idleMs) c = { reads: 0, last: now };
    else this.cold.delete(key);
    c.reads += reads;
    c.last = now;
    if (c.reads >= this.opts.hotAfterReads && this.held.size < this.opts.maxKeys) return true;
    this.cold.set(key, c);
    if (this.cold.size > this.maxCold) this.cold.delete(this.cold.keys().next().value!);
    return false;
  }

  hold(key: string, now: number): void {
    this.cold.delete(key);
    this.held.set(key, now);
  }

  drop(key: string): void {
    this.held.delete(key);
  }

  /** Held keys not read for idleMs. */
  idle(now: number): string[] {
    const out: string[] = [];
    for (const [k, last] of this.held) {
      if (now - last < this.opts.idleMs) break;
      out.push(k);
    }
    return out;
  }

  /** Held keys, least recently read first. */
  leastRecent(): IterableIterator<string> {
    return this.held.keys();
  }

  keys(): IterableIterator<string> {
    return this.held.keys();
  }
}
