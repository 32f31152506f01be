// The spans usage is kept at, the table holding each span for a token and for a stack, and how
// a time range is cut into the fewest rows to read (docs/accounts.md "Accounts, tokens and the console").
// Every span starts at an epoch multiple of its length (UTC minutes, hours, 6-hour blocks from
// 00:00 UTC, UTC days) and each divides the next, so a roll-up row holds exactly the minutes
// inside it and a range cut at span boundaries reads every minute once.

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const SIX_HOURS_MS = 6 * HOUR_MS;
export const DAY_MS = 86_400_000;

export const floorTo = (t: number, unit: number): number => Math.floor(t / unit) * unit;
export const ceilTo = (t: number, unit: number): number => Math.ceil(t / unit) * unit;

export type TokenUsageTableName = 'usage_minute' | 'usage_hour' | 'usage_6h';
export type StackUsageTableName = 'stack_usage_minute' | 'stack_usage_hour' | 'stack_usage_6h' | 'stack_usage_day';

/** Whose usage a table sums: one token's, or all the tokens of one stack. */
export type UsageScope = 'token' | 'stack';

export interface SpanTable {
  span: number;
  table: TokenUsageTableName | StackUsageTableName;
}

/**
 * The spans of each scope, shortest first. A token needs no days (only the stack overview
 * reads days); a stack keeps minutes because the 1 h window over its tokens would otherwise
 * read every token's minutes.
 */
export const SPANS: Readonly<Record<UsageScope, readonly SpanTable[]>> = {
  token: [
    { span: MINUTE_MS, table: 'usage_minute' },
    { span: HOUR_MS, table: 'usage_hour' },
    { span: SIX_HOURS_MS, table: 'usage_6h' },
  ],
  stack: [
    { span: MINUTE_MS, table: 'stack_usage_minute' },
    { span: HOUR_MS, table: 'stack_usage_hour' },
    { span: SIX_HOURS_MS, table: 'stack_usage_6h' },
    { span: DAY_MS, table: 'stack_usage_day' },
  ],
};

/** The key column of a scope's tables. */
export const KEY_COLUMN: Readonly<Record<UsageScope, 'token_id' | 'stack_id'>> = { token: 'token_id', stack: 'stack_id' };

/** Rows of `table` with from <= start_ms < to: whole spans, together exactly the minutes of [from, to). */
export interface Piece extends SpanTable {
  from: number;
  to: number;
}

/**
 * Cuts [from, to) (both minute boundaries) into pieces, each read from one span's table: the
 * longest spans that fit whole in the middle, shorter ones only towards the edges, so a week
 * reads a few days rather than thousands of minutes. Spans longer than `maxSpan` are left out
 * (a chart whose buckets are hours must not read a row that spans six of them).
 */
export function cover(spans: readonly SpanTable[], from: number, to: number, maxSpan = Infinity): Piece[] {
  const usable = spans.filter((s) => s.span <= maxSpan);
  const out: Piece[] = [];
  if (!(from < to) || usable.length === 0) return out;
  let pos = from;
  let level = 0;
  // Up: the shorter span until the next boundary of the longer one, while that is inside.
  while (level + 1 < usable.length) {
    const next = ceilTo(pos, usable[level + 1]!.span);
    if (next > to) break;
    if (next > pos) out.push({ ...usable[level]!, from: pos, to: next });
    pos = next;
    level++;
  }
  // Down: as many of each span as fit, longest first.
  for (let l = level; l >= 0; l--) {
    const s = usable[l]!;
    const end = floorTo(to, s.span);
    if (end > pos) {
      out.push({ ...s, from: pos, to: end });
      pos = end;
    }
  }
  return out;
}
