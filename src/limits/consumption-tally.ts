// What this instance's limiters took from each bucket since the last sync with Redis (docs/routing.md
// "Shared limits across instances (Redis)"). Kept only when `redis.url` is set: the limiter adds
// to it on every take that passed, the control plane drains it every `redis.syncMs`. Nested
// maps of small cells, so a key seen again in the interval costs two lookups and no allocation.
//
// Bounded: at most `cap` distinct (table, key) pairs per interval. Takes of further keys stay
// local (enforced by this instance's own buckets) and are counted in `dropped`.

/** Table ids, the first part of a counter's name in Redis. */
export const TABLE_KEY = 'k';
export const TABLE_IP = 'i';
export const TABLE_TOKEN = 't';
/** Per-method tables: 'm:' + method. */
export const TABLE_METHOD_PREFIX = 'm:';

/** (table, key, calls) triples: plain data, so it crosses threads by structured clone. */
export type Consumed = [table: string, key: string, n: number][];

class Cell {
  n = 0;
}

export class ConsumptionTally {
  private keys = new Map<string, Cell>();
  private ips = new Map<string, Cell>();
  private tokens = new Map<string, Cell>();
  /** method → token id → calls */
  private methods = new Map<string, Map<string, Cell>>();
  private size = 0;
  /** Calls left untallied since the start because the tally was full (they stayed local). */
  dropped = 0;

  constructor(readonly cap: number) {}

  /** Distinct (table, key) pairs tallied since the last drain. */
  get entries(): number {
    return this.size;
  }

  key(isIp: boolean, key: string, n: number): void {
    this.addTo(isIp ? this.ips : this.keys, key, n);
  }

  token(tokenId: string, n: number): void {
    this.addTo(this.tokens, tokenId, n);
  }

  method(method: string, tokenId: string, n: number): void {
    let m = this.methods.get(method);
    if (m === undefined) this.methods.set(method, (m = new Map()));
    this.addTo(m, tokenId, n);
  }

  /** Adds what another thread tallied (a data-plane worker's drain). */
  merge(consumed: Consumed): void {
    for (const [table, key, n] of consumed) {
      if (table === TABLE_KEY) this.addTo(this.keys, key, n);
      else if (table === TABLE_IP) this.addTo(this.ips, key, n);
      else if (table === TABLE_TOKEN) this.addTo(this.tokens, key, n);
      else if (table.startsWith(TABLE_METHOD_PREFIX)) this.method(table.slice(TABLE_METHOD_PREFIX.length), key, n);
    }
  }

  /** Everything since the last drain; the tally starts from zero again. */
  drain(): Consumed {
    const out: Consumed = [];
    if (this.size === 0) return out;
    for (const [key, c] of this.keys) out.push([TABLE_KEY, key, c.n]);
    for (const [key, c] of this.ips) out.push([TABLE_IP, key, c.n]);
    for (const [key, c] of this.tokens) out.push([TABLE_TOKEN, key, c.n]);
    for (const [method, m] of this.methods) {
      const table = TABLE_METHOD_PREFIX + method;
      for (const [key, c] of m) out.push([table, key, c.n]);
    }
    this.keys = new Map();
    this.ips = new Map();
    this.tokens = new Map();
    this.methods = new Map();
    this.size = 0;
    return out;
  }

  private addTo(m: Map<string, Cell>, key: string, n: number): void {
    let cell = m.get(key);
    if (cell === undefined) {
      if (this.size >= this.cap) {
        this.dropped += n;
        return;
      }
      m.set(key, (cell = new Cell()));
      this.size++;
    }
    cell.n += n;
  }
}
