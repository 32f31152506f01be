// Login throttling: failed logins per client IP and per email, each a token bucket in a
// bounded BucketTable (src/routing/buckets.ts), so a flood of distinct IPs or emails cannot
// grow memory. An attempt takes one token from both buckets before the password is checked
// (parallel guesses are counted too); a successful login gives them back, so only failures
// count. The email bucket exists for unknown emails too: a 429 says nothing about accounts.

import { BucketTable } from '../limits/bucket-table.js';

export interface RateSpec {
  /** Sustained failures allowed per minute. */
  perMinute: number;
  /** Failures allowed in a burst. */
  burst: number;
}

export interface ThrottleLimits {
  perIp: RateSpec;
  perAccount: RateSpec;
}

/** Registrations per client IP: each creates an account, so every attempt counts. */
export const DEFAULT_REGISTER_LIMIT: RateSpec = { perMinute: 10, burst: 20 };

export const DEFAULT_LOGIN_LIMITS: ThrottleLimits = {
  perIp: { perMinute: 10, burst: 20 },
  perAccount: { perMinute: 5, burst: 10 },
};

const CAPACITY = 10_000;

export class LoginThrottle {
  private readonly ip: BucketTable;
  private readonly account: BucketTable;

  constructor(limits: ThrottleLimits = DEFAULT_LOGIN_LIMITS) {
    this.ip = new BucketTable(CAPACITY, limits.perIp.perMinute / 60, limits.perIp.burst);
    this.account = new BucketTable(CAPACITY, limits.perAccount.perMinute / 60, limits.perAccount.burst);
  }

  /** Takes one attempt; returns 0 when allowed, else the milliseconds to wait. */
  begin(ip: string, email: string): number {
    const now = performance.now();
    const ipWait = this.ip.take(ip, 1, now);
    if (ipWait > 0) return ipWait;
    const accountWait = this.account.take(email, 1, now);
    if (accountWait > 0) {
      this.ip.take(ip, -1, now); // this attempt never ran: give the IP its token back
      return accountWait;
    }
    return 0;
  }

  /** The attempt succeeded: it does not count as a failure. */
  succeeded(ip: string, email: string): void {
    const now = performance.now();
    // A negative take refills the bucket (the table caps the level at `burst` on the next read).
    this.ip.take(ip, -1, now);
    this.account.take(email, -1, now);
  }
}

/**
 * Registration attempts per client IP. Unlike logins, success counts too: a script creating
 * accounts is what this stops, and each attempt costs a password hash before the store says
 * whether the email is taken.
 */
export class RegisterThrottle {
  private readonly ip: BucketTable;

  constructor(limit: RateSpec = DEFAULT_REGISTER_LIMIT) {
    this.ip = new BucketTable(CAPACITY, limit.perMinute / 60, limit.burst);
  }

  /** Takes one attempt; returns 0 when allowed, else the milliseconds to wait. */
  begin(ip: string): number {
    return this.ip.take(ip, 1, performance.now());
  }
}
