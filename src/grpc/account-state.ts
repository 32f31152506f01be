// An upstream account update as the account cache keeps it (src/cache/account-value.ts): the
// u64s read as decimal digits (the shared update reader keeps numbers, exact only to 2^53, and
// a rent-exempt account's rent epoch is u64::MAX), the owner in base58, the data copied out of
// the message so the message's buffer is not kept alive by one account.

import type { AccountState } from '../cache/account-value.js';
import { encodeBase58 } from '../solana/base58.js';
import { KIND_ACCOUNT, type Update } from './update.js';
import { WireReader } from './wire.js';

function u64Digits(buf: Buffer, r: WireReader): string {
  let v = 0n;
  let shift = 0n;
  for (let i = 0; i < 10; i++) {
    const b = buf[r.pos++]!;
    v |= BigInt(b & 0x7f) << shift;
    if (b < 0x80) return v.toString();
    shift += 7n;
  }
  return v.toString();
}

/** The account of an update of KIND_ACCOUNT; undefined when the message is not one. */
export function accountStateOf(u: Update): AccountState | undefined {
  if (u.kind !== KIND_ACCOUNT) return undefined;
  const buf = u.raw;
  // SubscribeUpdate.account (field 2) → SubscribeUpdateAccount.account (field 1): SubscribeUpdateAccountInfo.
  let info: WireReader | null = null;
  const top = new WireReader(buf, 0, buf.length);
  while (info === null && top.next()) {
    if (top.field !== KIND_ACCOUNT || top.wire !== 2) {
      top.skip();
      continue;
    }
    const s = top.len();
    const member = new WireReader(buf, s, top.pos);
    while (member.next()) {
      if (member.field === 1 && member.wire === 2) {
        const is = member.len();
        info = new WireReader(buf, is, member.pos);
        break;
      }
      member.skip();
    }
  }
  if (info === null) return undefined;
  let lamports = '0';
  let owner = '';
  let executable = false;
  let rentEpoch = '0';
  let data: Buffer = Buffer.alloc(0);
  while (info.next()) {
    switch (info.field) {
      case 2:
        lamports = u64Digits(buf, info);
        break;
      case 3: {
        const s = info.len();
        owner = encodeBase58(buf.subarray(s, info.pos));
        break;
      }
      case 4:
        executable = info.varint() !== 0;
        break;
      case 5:
        rentEpoch = u64Digits(buf, info);
        break;
      case 6: {
        const s = info.len();
        data = Buffer.from(buf.subarray(s, info.pos));
        break;
      }
      default:
        info.skip();
    }
  }
  // Agave's geyser sends a closed account as 0 lamports, no data, the system program: the RPC answers null for it.
  if (lamports === '0') return null;
  return { lamports, owner: owner === '' ? '11111111111111111111111111111111' : owner, executable, rentEpoch, data };
}
