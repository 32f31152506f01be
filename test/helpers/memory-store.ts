// An in-memory Store (src/store/types.ts) for tests that need accounts, stacks and tokens
// without SQL. Usage sums are exact; latency percentiles are left null (no histograms).

import { createHash, randomBytes, randomUUID } from 'node:crypto';
import {
  StoreError,
  type Account,
  type Analytics,
  type AnalyticsWindow,
  type ApiToken,
  type LandingRow,
  type LandingTotals,
  type Overview,
  type Session,
  type Stack,
  type Store,
  type TokenForGateway,
  type TokenNodeLandingTotals,
  type UsageRow,
} from '../../src/store/types.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WINDOWS: Record<AnalyticsWindow, { span: number; step: number }> = {
  '1h': { span: HOUR, step: MINUTE },
  '24h': { span: DAY, step: HOUR },
  '7d': { span: 7 * DAY, step: 6 * HOUR },
};

export class MemoryStore implements Store {
  readonly accounts = new Map<string, Account>();
  readonly sessions = new Map<string, Session>();
  readonly stacks = new Map<string, Stack>();
  readonly tokens = new Map<string, ApiToken & { hash: Buffer }>();
  readonly usage: UsageRow[] = [];
  readonly landing: LandingRow[] = [];
  private version = 0;

  async migrate(): Promise<void> {}
  async close(): Promise<void> {}

  async createAccount(email: string, passwordHash: string): Promise<Account> {
    if (await this.accountByEmail(email)) throw new StoreError('conflict', 'an account with this email exists');
    const a: Account = { id: randomUUID(), email, passwordHash, createdAt: Date.now() };
    this.accounts.set(a.id, a);
    return a;
  }

  async accountByEmail(email: string): Promise<Account | null> {
    for (const a of this.accounts.values()) if (a.email === email) return a;
    return null;
  }

  async accountById(id: string): Promise<Account | null> {
    return this.accounts.get(id) ?? null;
  }

  async createSession(accountId: string, ttlMs: number): Promise<Session> {
    const now = Date.now();
    const s: Session = {
      id: randomBytes(32).toString('base64url'),
      accountId,
      csrfToken: randomBytes(32).toString('base64url'),
      createdAt: now,
      expiresAt: now + ttlMs,
    };
    this.sessions.set(s.id, s);
    return s;
  }

  async sessionById(id: string): Promise<Session | null> {
    const s = this.sessions.get(id);
    return s && s.expiresAt > Date.now() ? s : null;
  }

  async deleteSession(id: string): Promise<void> {
    this.sessions.delete(id);
  }

  async createStack(accountId: string, name: string, description: string | null): Promise<Stack> {
    if (await this.stackByName(accountId, name)) throw new StoreError('conflict', `a stack named "${name}" exists`);
    const s: Stack = { id: randomUUID(), accountId, name, description, disabled: false, createdAt: Date.now() };
    this.stacks.set(s.id, s);
    this.version++;
    return s;
  }

  async listStacks(accountId: string): Promise<Stack[]> {
    return [...this.stacks.values()].filter((s) => s.accountId === accountId);
  }

  async stackById(accountId: string, stackId: string): Promise<Stack | null> {
    const s = this.stacks.get(stackId);
    return s && s.accountId === accountId ? s : null;
  }

  async stackByName(accountId: string, name: string): Promise<Stack | null> {
    return (await this.listStacks(accountId)).find((s) => s.name === name) ?? null;
  }

  async createToken(accountId: string, stackId: string, label: string): Promise<{ token: string; record: ApiToken }> {
    if (!(await this.stackById(accountId, stackId))) throw new StoreError('not_found', 'no such stack');
    const token = randomBytes(24).toString('base64url');
    const full = {
      id: randomUUID(),
      accountId,
      stackId,
      prefix: token.slice(0, 8),
      label,
      active: true,
      createdAt: Date.now(),
      lastUsedAt: null,
      hash: createHash('sha256').update(token).digest(),
    };
    this.tokens.set(full.id, full);
    this.version++;
    return { token, record: strip(full) };
  }

  async listTokens(accountId: string, stackId: string): Promise<ApiToken[]> {
    return [...this.tokens.values()].filter((t) => t.accountId === accountId && t.stackId === stackId).map(strip);
  }

  async setTokenActive(accountId: string, tokenId: string, active: boolean): Promise<ApiToken | null> {
    const t = this.tokens.get(tokenId);
    if (!t || t.accountId !== accountId) return null;
    t.active = active;
    this.version++;
    return strip(t);
  }

  async deleteToken(accountId: string, tokenId: string): Promise<boolean> {
    const t = this.tokens.get(tokenId);
    if (!t || t.accountId !== accountId) return false;
    this.tokens.delete(tokenId);
    this.version++;
    return true;
  }

  async tokensForGateway(): Promise<TokenForGateway[]> {
    return [...this.tokens.values()].map((t) => ({
      id: t.id,
      hash: t.hash,
      prefix: t.prefix,
      stackId: t.stackId,
      active: t.active && !this.stacks.get(t.stackId)?.disabled,
    }));
  }

  async tokenVersion(): Promise<number> {
    return this.version;
  }

  async touchTokens(lastUsed: Map<string, number>): Promise<void> {
    for (const [id, at] of lastUsed) {
      const t = this.tokens.get(id);
      if (t) t.lastUsedAt = Math.max(t.lastUsedAt ?? 0, at);
    }
  }

  async addUsage(rows: UsageRow[]): Promise<void> {
    this.usage.push(...rows.map((r) => ({ ...r })));
  }

  private rowsOf(accountId: string, stackId: string, from: number, tokenId?: string): UsageRow[] {
    return this.usage.filter((r) => {
      const t = this.tokens.get(r.tokenId);
      return t && t.accountId === accountId && t.stackId === stackId && r.minute >= from && (!tokenId || r.tokenId === tokenId);
    });
  }

  async overview(accountId: string, stackId: string, now: number): Promise<Overview> {
    const recent = this.rowsOf(accountId, stackId, now - DAY);
    const today = Math.floor(now / DAY) * DAY;
    const daily = Array.from({ length: 7 }, (_, i) => ({ day: today - (6 - i) * DAY, calls: 0 }));
    for (const r of this.rowsOf(accountId, stackId, daily[0]!.day)) {
      const d = daily[Math.floor((r.minute - daily[0]!.day) / DAY)];
      if (d) d.calls += r.calls;
    }
    return {
      calls24h: recent.reduce((n, r) => n + r.calls, 0),
      bytes24h: recent.reduce((n, r) => n + r.bytesIn + r.bytesOut, 0),
      activeTokens: (await this.listTokens(accountId, stackId)).filter((t) => t.active).length,
      daily,
    };
  }

  async analytics(accountId: string, stackId: string, window: AnalyticsWindow, now: number, tokenId?: string): Promise<Analytics> {
    const { span, step } = WINDOWS[window];
    const to = Math.floor(now / step) * step + step;
    const from = to - span;
    const byMethod = new Map<string, { calls: number; errors: number }>();
    const series = Array.from({ length: span / step }, (_, i) => ({ t: from + i * step, calls: 0, errors: 0 }));
    for (const r of this.rowsOf(accountId, stackId, from, tokenId)) {
      const m = byMethod.get(r.method) ?? { calls: 0, errors: 0 };
      m.calls += r.calls;
      m.errors += r.errors;
      byMethod.set(r.method, m);
      const b = series[Math.floor((r.minute - from) / step)];
      if (b) {
        b.calls += r.calls;
        b.errors += r.errors;
      }
    }
    const methods = [...byMethod].map(([method, m]) => ({ method, ...m, p50: null, p99: null })).sort((a, b) => b.calls - a.calls);
    return { from, to, methods, series };
  }

  async compactUsage(): Promise<void> {}

  async addLanding(rows: LandingRow[]): Promise<void> {
    this.landing.push(...rows.map((r) => ({ ...r, slots: [...r.slots] })));
  }

  private landingOf(kind: LandingRow['kind'], keys: readonly string[] | null, sinceMs: number): LandingTotals[] {
    const from = Math.floor(sinceMs / HOUR) * HOUR;
    const out = new Map<string, LandingTotals>();
    for (const r of this.landing) {
      if (r.kind !== kind || r.hour < from || (keys !== null && !keys.includes(r.key))) continue;
      let e = out.get(r.key);
      if (e === undefined)
        out.set(r.key, (e = { key: r.key, sent: 0, landed: 0, expired: 0, failed: 0, untracked: 0, resent: 0, slots: new Array<number>(65).fill(0) }));
      for (const k of ['sent', 'landed', 'expired', 'failed', 'untracked', 'resent'] as const) e[k] += r[k];
      r.slots.forEach((n, i) => (e.slots[Math.min(i, 64)]! += n));
    }
    return [...out.values()].sort((a, b) => (a.key < b.key ? -1 : 1));
  }

  async landingByToken(tokenIds: readonly string[], sinceMs: number): Promise<LandingTotals[]> {
    return this.landingOf('token', tokenIds, sinceMs);
  }

  async landingByNode(sinceMs: number): Promise<LandingTotals[]> {
    return this.landingOf('node', null, sinceMs);
  }

  async landingByTokenNode(tokenIds: readonly string[], sinceMs: number): Promise<TokenNodeLandingTotals[]> {
    const out: TokenNodeLandingTotals[] = [];
    for (const { key, ...amounts } of this.landingOf('token-node', null, sinceMs)) {
      const cut = key.indexOf('/');
      const tokenId = key.slice(0, cut);
      if (tokenIds.includes(tokenId)) out.push({ tokenId, node: key.slice(cut + 1), ...amounts });
    }
    return out;
  }

  async compactLanding(): Promise<void> {}
}

function strip(t: ApiToken & { hash: Buffer }): ApiToken {
  return {
    id: t.id,
    accountId: t.accountId,
    stackId: t.stackId,
    prefix: t.prefix,
    label: t.label,
    active: t.active,
    createdAt: t.createdAt,
    lastUsedAt: t.lastUsedAt,
  };
}
