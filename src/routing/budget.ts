// A node's spending in front of a paid provider (docs/routing.md "Provider budgets"): a token
// bucket in credits per second (`nodes[].budget`), credits per method, an optional daily cap,
// the cooldown after the node answered 429, and the figures (calls, credits, 429s, cooldowns,
// learned exclusions) per hour. Plain numbers on one object per node, set in the constructor:
// a check or a spend allocates nothing.

export interface BudgetConfig {
  /** Credits per second. */
  rate: number;
  /** Credits the bucket holds at most (a burst); default: one second's rate. */
  burst?: number | undefined;
  /** Credits per call of a method; others cost 1. */
  costs?: Record<string, number> | undefined;
  /** Credits per UTC day at most. */
  perDay?: number | undefined;
}

/** 429s closer together than this are "repeated": each lowers the effective rate. */
export const REPEAT_429_MS = 10_000;
/** Each repeated 429 multiplies the effective rate by this. */
export const LOWER_BY = 0.8;
/** The effective rate never goes below this fraction of the configured one. */
export const FLOOR = 0.1;
/** Without a 429 for REPEAT_429_MS, the effective rate climbs back this fraction of the configured rate per second. */
export const CREEP_PER_S = 0.02;
/** Cooldown after a 429 without Retry-After: 1 s, doubling per 429 in a row, at most 30 s. */
export const BACKOFF_MS = 1_000;
export const BACKOFF_MAX_MS = 30_000;
/** A Retry-After beyond this is read as this. */
export const RETRY_AFTER_MAX_MS = 300_000;

/** Figures kept per hour (the current hour and the 23 before it). */
export const HOURS = 24;
export const H_CALLS = 0;
export const H_CREDITS = 1;
export const H_LIMITED = 2;
export const H_COOLDOWNS = 3;
export const H_LEARNED = 4;
const FIELDS = 5;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** A node's budget in GET /admin/nodes (docs/admin-api.md). */
export interface BudgetView {
  rate: number;
  burst: number;
  perDay: number | null;
  /** The rate in force after 429s lowered it (docs/routing.md "Provider budgets"). */
  effectiveRate: number;
  available: number;
  spentToday: number;
  costs: Record<string, number>;
}

export class NodeBudget {
  /** Configured credits per second for this instance's share; Infinity: no budget. */
  rate = Infinity;
  burst = Infinity;
  perDay = Infinity;
  /** This data plane's part of the node's budget (1 / workers). */
  share = 1;
  /** Credits per method; empty: every call costs 1. */
  costs: ReadonlyMap<string, number> = new Map();
  /** The rate in force: lowered by repeated 429s, creeping back to `rate`. */
  effRate = Infinity;
  tokens = 0;
  /** performance.now() of the last refill. */
  last = 0;
  /** Credits spent in the UTC day `day` (Date.now() / 1 day). */
  dayUsed = 0;
  day = 0;
  /** No call goes to the node before this (performance.now()), after a 429. */
  coolUntil = 0;
  /** performance.now() of the last 429, and how many came in a row (each within REPEAT_429_MS). */
  lastLimited = -Infinity;
  streak = 0;
  // Totals since start.
  calls = 0;
  credits = 0;
  limited = 0;
  cooldowns = 0;
  learned = 0;
  /** Per hour: FIELDS figures for each of HOURS hours, a ring indexed by hour number. */
  readonly hours = new Float64Array(HOURS * FIELDS);
  /** Hour number (Date.now() / 1 h) each ring row holds. */
  readonly hourOf = new Float64Array(HOURS);

  /** `share`: this data plane's part of the node's budget (1 / workers). */
  configure(c: BudgetConfig | undefined, share: number, now: number): void {
    const costs = new Map<string, number>();
    if (c === undefined) {
      this.rate = this.burst = this.perDay = this.effRate = Infinity;
      this.costs = costs;
      return;
    }
    for (const [m, v] of Object.entries(c.costs ?? {})) costs.set(m, v);
    this.costs = costs;
    this.share = share;
    const before = this.rate;
    this.rate = c.rate * share;
    this.burst = (c.burst ?? c.rate) * share;
    this.perDay = c.perDay === undefined ? Infinity : c.perDay * share;
    // A new budget starts full; a changed one keeps what is left, within the new burst.
    if (before === Infinity) {
      this.effRate = this.rate;
      this.tokens = this.burst;
      this.last = now;
    } else {
      this.effRate = Math.min(this.rate, this.effRate === Infinity ? this.rate : (this.effRate / before) * this.rate);
      this.tokens = Math.min(this.tokens, this.burst);
    }
  }

  costOf(method: string): number {
    const c = this.costs;
    if (c.size === 0) return 1;
    const v = c.get(method);
    return v === undefined ? 1 : v;
  }

  private refill(now: number): void {
    const dt = now - this.last;
    if (dt <= 0) return;
    if (this.effRate < this.rate) {
      // Creeps back over the part of dt that is REPEAT_429_MS or more after the last 429.
      const quietFrom = this.lastLimited + REPEAT_429_MS;
      const q = now - (this.last > quietFrom ? this.last : quietFrom);
      if (q > 0) this.effRate = Math.min(this.rate, this.effRate + (this.rate * CREEP_PER_S * q) / 1000);
    }
    this.last = now;
    const t = this.tokens + (this.effRate * dt) / 1000;
    this.tokens = t > this.burst ? this.burst : t;
  }

  /** Whether a call costing `cost` must not go to the node now: cooling down, or its budget is spent. */
  blocked(cost: number, now: number, wall: number): boolean {
    if (now < this.coolUntil) return true;
    if (this.rate === Infinity) return false;
    this.refill(now);
    if (this.perDay !== Infinity && Math.floor(wall / DAY_MS) === this.day && this.dayUsed + cost > this.perDay) return true;
    // A call dearer than the whole burst goes once the bucket is full (else it never could).
    return this.tokens < (cost > this.burst ? this.burst : cost);
  }

  /** Milliseconds until a call costing `cost` could go (Infinity: not today). */
  waitMs(cost: number, now: number, wall: number): number {
    let w = now < this.coolUntil ? this.coolUntil - now : 0;
    if (this.rate === Infinity) return w;
    if (this.perDay !== Infinity && Math.floor(wall / DAY_MS) === this.day && this.dayUsed + cost > this.perDay) {
      return Math.max(w, DAY_MS - (wall % DAY_MS));
    }
    const need = (cost > this.burst ? this.burst : cost) - this.tokens;
    if (need > 0 && this.effRate > 0) w = Math.max(w, (need * 1000) / this.effRate);
    return w;
  }

  /** An attempt of a call of `method` went to the node; `span`: its sub-batch's calls (0 for one call). */
  spendCall(method: string, span: number, now: number): void {
    const count = span > 1 ? span : 1;
    this.spend(this.costOf(method) * count, count, now, Date.now());
  }

  /** A call went to the node (`count`: calls it carries, a sub-batch's several). */
  spend(cost: number, count: number, now: number, wall: number): void {
    this.calls += count;
    this.credits += cost;
    const row = this.row(wall);
    this.hours[row + H_CALLS]! += count;
    this.hours[row + H_CREDITS]! += cost;
    if (this.rate === Infinity) return;
    this.refill(now);
    this.tokens -= cost;
    const d = Math.floor(wall / DAY_MS);
    if (d !== this.day) {
      this.day = d;
      this.dayUsed = 0;
    }
    this.dayUsed += cost;
  }

  /**
   * The node answered 429: no call goes to it for `retryAfterMs` (its Retry-After; -1 when it
   * gave none: a backoff doubling per 429 in a row). Repeated 429s lower the effective rate.
   */
  limitedBy(retryAfterMs: number, now: number, wall: number): void {
    if (this.rate !== Infinity) this.refill(now);
    const repeated = now - this.lastLimited < REPEAT_429_MS;
    this.streak = repeated ? this.streak + 1 : 1;
    this.lastLimited = now;
    this.limited++;
    const row = this.row(wall);
    this.hours[row + H_LIMITED]! += 1;
    if (repeated && this.rate !== Infinity) {
      this.effRate = Math.max(this.rate * FLOOR, this.effRate * LOWER_BY);
      if (this.tokens > 0) this.tokens = 0;
    }
    const ms = retryAfterMs >= 0 ? Math.min(retryAfterMs, RETRY_AFTER_MAX_MS) : Math.min(BACKOFF_MS * 2 ** (this.streak - 1), BACKOFF_MAX_MS);
    if (now + ms > this.coolUntil) {
      if (now >= this.coolUntil) {
        this.cooldowns++;
        this.hours[row + H_COOLDOWNS]! += 1;
      }
      this.coolUntil = now + ms;
    }
  }

  /** The node was found not to support a method (routing/method-support.ts). */
  learnedOne(wall: number): void {
    this.learned++;
    this.hours[this.row(wall) + H_LEARNED]! += 1;
  }

  /** The ring row of the hour `wall` falls in, cleared when it held an older hour. */
  private row(wall: number): number {
    const h = Math.floor(wall / HOUR_MS);
    const i = h % HOURS;
    if (this.hourOf[i] !== h) {
      this.hourOf[i] = h;
      this.hours.fill(0, i * FIELDS, i * FIELDS + FIELDS);
    }
    return i * FIELDS;
  }

  /** Figures per hour, newest first (hours with none left out), for the admin API. */
  hourly(wall: number): { hour: string; calls: number; credits: number; limited: number; cooldowns: number; learned: number }[] {
    const now = Math.floor(wall / HOUR_MS);
    const out = [];
    for (let h = now; h > now - HOURS; h--) {
      const i = h % HOURS;
      if (this.hourOf[i] !== h) continue;
      const r = i * FIELDS;
      const x = this.hours;
      out.push({
        hour: new Date(h * HOUR_MS).toISOString(),
        calls: x[r + H_CALLS]!,
        credits: x[r + H_CREDITS]!,
        limited: x[r + H_LIMITED]!,
        cooldowns: x[r + H_COOLDOWNS]!,
        learned: x[r + H_LEARNED]!,
      });
    }
    return out;
  }

  /** Adds a worker's figures (its report's deltas: calls, credits, limited, cooldowns, learned). */
  addFigures(d: readonly number[], wall: number): void {
    this.calls += d[0]!;
    this.credits += d[1]!;
    this.limited += d[2]!;
    this.cooldowns += d[3]!;
    this.learned += d[4]!;
    const row = this.row(wall);
    for (let k = 0; k < FIELDS; k++) this.hours[row + k]! += d[k]!;
  }

  /** What the admin API shows: the budget of the whole node (every worker's share), null without one. */
  view(now: number, wall: number): BudgetView | null {
    if (this.rate === Infinity) return null;
    this.refill(now);
    const s = this.share;
    const r = (x: number): number => Math.round((x / s) * 100) / 100;
    return {
      rate: r(this.rate),
      burst: r(this.burst),
      perDay: this.perDay === Infinity ? null : r(this.perDay),
      effectiveRate: r(this.effRate),
      available: r(Math.max(0, this.tokens)),
      spentToday: Math.floor(wall / DAY_MS) === this.day ? r(this.dayUsed) : 0,
      costs: Object.fromEntries(this.costs),
    };
  }

  /** Totals in addFigures' order. */
  totals(): number[] {
    return [this.calls, this.credits, this.limited, this.cooldowns, this.learned];
  }
}
