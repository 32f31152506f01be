// The one upstream request a source is asked for on behalf of every client of a commitment
// (docs/grpc.md "Sharing upstream subscriptions"): a superset of their filters, at most one named filter per kind and
// axis, so providers' per-kind filter limits still admit it. Each client's exact filters run
// in the gateway (./filters.ts); the upstream only narrows what travels.

import type { ClientFilters } from './filters.js';
import type { SubscribeRequestObject } from './proto.js';

function sorted(set: Set<string>): string[] {
  return [...set].sort();
}

/** One value when every filter agrees on it, else undefined (both kinds travel). */
function agreed(values: (boolean | undefined)[]): boolean | undefined {
  if (values.length === 0 || values.some((v) => v === undefined)) return undefined;
  return values.every((v) => v === values[0]) ? values[0] : undefined;
}

/** `taps`: the account keys of subscribers inside the gateway (./feed.ts FeedTap), who also want every slot status. */
export function unionRequest(clients: Iterable<ClientFilters>, commitment: number, taps: readonly ReadonlySet<string>[] | null = null): SubscribeRequestObject {
  let slots = false;
  let interslot = false;
  let metas = false;
  let allAccounts = false;
  const accountKeys = new Set<string>();
  const ownerKeys = new Set<string>();
  let allTxs = false;
  const include = new Set<string>();
  const votes: (boolean | undefined)[] = [];
  const fails: (boolean | undefined)[] = [];
  for (const c of clients) {
    if (c.slots.length > 0) slots = true;
    if (c.slots.some((f) => f.interslot)) interslot = true;
    if (c.blocksMeta.length > 0) metas = true;
    for (const f of c.accounts) {
      if (f.accountList.length > 0) for (const k of f.accountList) accountKeys.add(k);
      else if (f.ownerList.length > 0) for (const k of f.ownerList) ownerKeys.add(k);
      else allAccounts = true;
    }
    for (const f of c.transactions) {
      votes.push(f.vote);
      fails.push(f.failed);
      if (f.includeList.length > 0) for (const k of f.includeList) include.add(k);
      else allTxs = true;
    }
  }
  if (taps !== null) {
    slots = true;
    for (const keys of taps) for (const k of keys) accountKeys.add(k);
  }
  const req: SubscribeRequestObject = { commitment };
  if (slots) req.slots = { slots: interslot ? { filterByCommitment: false, interslotUpdates: true } : { filterByCommitment: false } };
  if (metas) req.blocksMeta = { blocks_meta: {} };
  if (allAccounts) req.accounts = { accounts: {} };
  else if (accountKeys.size > 0 || ownerKeys.size > 0) {
    req.accounts = {};
    if (accountKeys.size > 0) req.accounts.by_account = { account: sorted(accountKeys) };
    if (ownerKeys.size > 0) req.accounts.by_owner = { owner: sorted(ownerKeys) };
  }
  if (votes.length > 0) {
    const vote = agreed(votes);
    const failed = agreed(fails);
    req.transactions = {
      transactions: {
        ...(vote === undefined ? {} : { vote }),
        ...(failed === undefined ? {} : { failed }),
        ...(allTxs ? {} : { accountInclude: sorted(include) }),
      },
    };
  }
  return req;
}
