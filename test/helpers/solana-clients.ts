// Real Solana client libraries (@solana/web3.js v1 and @solana/kit) driven against a URL:
// the simulated node directly, or the gateway in front of it. If these pass, the shapes on
// the wire are exactly what the libraries expect from a Solana node.
//
// Library quirks these helpers take care of:
// - web3.js v1 derives its WS URL from the HTTP URL as "same URL, port + 1" (ws:// for
//   http://); with no port in the URL it keeps the default port. Its socket reconnects
//   forever unless closed with code 1000, which web3.js itself does 500 ms after the last
//   subscription is removed; so listeners must always be removed, or the process stays up.
// - web3.js sends {"jsonrpc":"2.0","method":"ping"} every 5 s while connected; kit sends the
//   same after 5 s without traffic on the socket. Neither expects an answer.
// - kit parses every integer as bigint (u64 fields stay exact: rentEpoch is
//   18446744073709551615n) and needs a ws:// or wss:// URL: it derives nothing. Its types
//   (v8) no longer declare rentEpoch on accounts, but the value is still parsed and present.

import { address, createSolanaRpc, createSolanaRpcSubscriptions } from '@solana/kit';
import { Connection, PublicKey, type SlotInfo } from '@solana/web3.js';
import type t from 'tap';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

/** The account the checks read (any string works on the sim; this is wrapped SOL's key). */
export const CHECK_ACCOUNT = 'So11111111111111111111111111111111111111112';
const SYSTEM_PROGRAM = '11111111111111111111111111111111';
const U64_MAX = 18446744073709551615n;
const TIMEOUT_MS = 5000;
const NOTIFICATIONS = 3;

function withTimeout<T>(p: Promise<T>, what: string, ms = TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** web3.js's internal rpc-websockets client (not public API, used only to see it close). */
interface Web3Socket {
  once(event: 'close', cb: () => void): void;
  socket?: unknown;
}

/**
 * Removes web3.js listeners, then waits for web3.js to close its idle socket (code 1000,
 * 500 ms after the last subscription is gone), which also proves the unsubscribes were answered.
 */
async function closeWeb3(conn: Connection, removals: (() => Promise<void>)[]): Promise<boolean> {
  const rpcWs = (conn as unknown as { _rpcWebSocket: Web3Socket })._rpcWebSocket;
  const closed = rpcWs.socket === undefined ? Promise.resolve() : new Promise<void>((r) => rpcWs.once('close', r));
  await Promise.all(removals.map((remove) => remove().catch(() => undefined)));
  try {
    await withTimeout(closed, 'web3.js closing its idle WebSocket', 3000);
    return true;
  } catch {
    // Force it so a failed check cannot leave a reconnecting socket behind.
    (rpcWs as unknown as { close(code?: number): void }).close(1000);
    return false;
  }
}

/** kit v8's account types leave rentEpoch out; the parsed object still has it. */
function rentEpochOf(value: unknown): unknown {
  return (value as { rentEpoch?: unknown } | null)?.rentEpoch;
}

function checkSlotInfos(t: Test, infos: readonly { slot: number | bigint; parent: number | bigint; root: number | bigint }[], what: string): void {
  t.ok(infos.length >= NOTIFICATIONS, `${what}: ${infos.length} notifications`);
  for (let i = 0; i < infos.length; i++) {
    const { slot, parent, root } = infos[i]!;
    t.ok(parent < slot && root <= parent, `${what}: parent ${parent} < slot ${slot}, root ${root} <= parent`);
    if (i > 0) t.ok(slot > infos[i - 1]!.slot, `${what}: slot ${slot} > ${infos[i - 1]!.slot}`);
  }
}

/**
 * web3.js v1: `new Connection(httpUrl, 'confirmed')`, onSlotChange receives >= 3 increasing
 * slots (over the WS derived as port + 1 unless `wsEndpoint` is given), the listener is
 * removed and the socket closes; getSlot and getAccountInfo work over HTTP.
 */
export async function checkWeb3OnSlotChange(httpUrl: string, t: Test, wsEndpoint?: string): Promise<void> {
  const conn = new Connection(httpUrl, wsEndpoint === undefined ? 'confirmed' : { commitment: 'confirmed', wsEndpoint });
  const infos: SlotInfo[] = [];
  let id = -1;
  try {
    await withTimeout(
      new Promise<void>((resolve) => {
        id = conn.onSlotChange((info) => {
          infos.push(info);
          if (infos.length === NOTIFICATIONS) resolve();
        });
      }),
      `web3.js onSlotChange: ${NOTIFICATIONS} notifications from ${wsEndpoint ?? httpUrl}`,
    );
  } finally {
    const closed = await closeWeb3(conn, [() => conn.removeSlotChangeListener(id)]);
    t.ok(closed, 'web3.js unsubscribed and closed its idle WebSocket');
  }
  checkSlotInfos(t, infos, 'web3.js onSlotChange');
  t.ok(
    infos.every((i) => typeof i.slot === 'number' && typeof i.parent === 'number' && typeof i.root === 'number'),
    'numbers',
  );

  const slot = await conn.getSlot();
  t.ok(Number.isInteger(slot) && slot >= infos[0]!.slot, `web3.js getSlot ${slot}`);
  const acct = await conn.getAccountInfo(new PublicKey(CHECK_ACCOUNT));
  t.ok(acct !== null, 'web3.js getAccountInfo');
  t.ok(Buffer.isBuffer(acct!.data), 'data decoded to a Buffer');
  t.equal(acct!.owner.toBase58(), SYSTEM_PROGRAM);
  t.equal(typeof acct!.lamports, 'number');
  t.equal(acct!.executable, false);
}

/**
 * web3.js v1: onRootChange and onAccountChange (base64, as web3.js asks) each deliver,
 * with the account decoded to a Buffer; both listeners are removed and the socket closes.
 */
export async function checkWeb3RootAndAccount(httpUrl: string, t: Test, wsEndpoint?: string): Promise<void> {
  const conn = new Connection(httpUrl, wsEndpoint === undefined ? 'confirmed' : { commitment: 'confirmed', wsEndpoint });
  const roots: number[] = [];
  const accounts: { lamports: number; data: Buffer; slot: number; owner: string }[] = [];
  let rootId = -1;
  let acctId = -1;
  try {
    await withTimeout(
      Promise.all([
        new Promise<void>((resolve) => {
          rootId = conn.onRootChange((root) => {
            roots.push(root);
            if (roots.length === 2) resolve();
          });
        }),
        new Promise<void>((resolve) => {
          acctId = conn.onAccountChange(new PublicKey(CHECK_ACCOUNT), (info, ctx) => {
            accounts.push({ lamports: info.lamports, data: info.data, slot: ctx.slot, owner: info.owner.toBase58() });
            if (accounts.length === 2) resolve();
          });
        }),
      ]),
      'web3.js onRootChange and onAccountChange: 2 notifications each',
    );
  } finally {
    const closed = await closeWeb3(conn, [() => conn.removeRootChangeListener(rootId), () => conn.removeAccountChangeListener(acctId)]);
    t.ok(closed, 'web3.js unsubscribed both and closed its idle WebSocket');
  }
  t.ok(roots[1]! > roots[0]!, `web3.js roots advance: ${roots.join(', ')}`);
  const [a, b] = accounts;
  t.ok(b!.slot > a!.slot, 'account notifications carry increasing context slots');
  t.ok(Buffer.isBuffer(a!.data) && a!.data.length > 0, 'account data decoded');
  t.equal(a!.owner, SYSTEM_PROGRAM);
  t.equal(typeof a!.lamports, 'number');
}

/**
 * @solana/kit: slotNotifications() on `wsUrl` yields >= 3 increasing slots (bigint), then
 * the subscription is aborted; getSlot and getAccountInfo over `httpUrl` work, the latter
 * with rentEpoch parsed exactly as u64 max.
 */
export async function checkKitSlotNotifications(wsUrl: string, httpUrl: string, t: Test): Promise<void> {
  const subs = createSolanaRpcSubscriptions(wsUrl);
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(new Error(`timed out after ${TIMEOUT_MS} ms: kit slotNotifications from ${wsUrl}`)), TIMEOUT_MS);
  const got: { slot: bigint; parent: bigint; root: bigint }[] = [];
  try {
    const notifications = await subs.slotNotifications().subscribe({ abortSignal: ac.signal });
    for await (const n of notifications) {
      got.push(n);
      if (got.length === NOTIFICATIONS) break;
    }
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
  checkSlotInfos(t, got, 'kit slotNotifications');
  t.ok(
    got.every((n) => typeof n.slot === 'bigint' && typeof n.parent === 'bigint' && typeof n.root === 'bigint'),
    'bigints',
  );

  const rpc = createSolanaRpc(httpUrl);
  const slot = await rpc.getSlot().send();
  t.equal(typeof slot, 'bigint', 'kit getSlot');
  t.ok(slot >= got[0]!.slot, `kit getSlot ${slot}`);
  const acct = await rpc.getAccountInfo(address(CHECK_ACCOUNT), { encoding: 'base64' }).send();
  t.ok(acct.value !== null, 'kit getAccountInfo');
  t.equal(rentEpochOf(acct.value), U64_MAX, 'rentEpoch exact as bigint');
  t.equal(acct.value!.data[1], 'base64');
  t.equal(acct.value!.owner, SYSTEM_PROGRAM);
}

/**
 * @solana/kit: rootNotifications() and accountNotifications(base64) each yield two
 * notifications with exact u64 fields (rentEpoch 2^64-1 as bigint), then are aborted.
 */
export async function checkKitRootAndAccount(wsUrl: string, t: Test): Promise<void> {
  const subs = createSolanaRpcSubscriptions(wsUrl);
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(new Error(`timed out after ${TIMEOUT_MS} ms: kit root/account notifications from ${wsUrl}`)), TIMEOUT_MS);
  const roots: bigint[] = [];
  const accounts: { slot: bigint; lamports: bigint; rentEpoch: unknown; data: readonly [string, string]; space: bigint }[] = [];
  try {
    const rootIt = await subs.rootNotifications().subscribe({ abortSignal: ac.signal });
    const acctIt = await subs
      .accountNotifications(address(CHECK_ACCOUNT), { encoding: 'base64', commitment: 'confirmed' })
      .subscribe({ abortSignal: ac.signal });
    await Promise.all([
      (async () => {
        for await (const r of rootIt) {
          roots.push(r);
          if (roots.length === 2) break;
        }
      })(),
      (async () => {
        for await (const n of acctIt) {
          accounts.push({ slot: n.context.slot, lamports: n.value.lamports, rentEpoch: rentEpochOf(n.value), data: n.value.data, space: n.value.space });
          if (accounts.length === 2) break;
        }
      })(),
    ]);
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
  t.ok(roots.length === 2 && roots[1]! > roots[0]!, `kit roots advance: ${roots.join(', ')}`);
  t.equal(typeof roots[0], 'bigint');
  const [a, b] = accounts;
  t.ok(b!.slot > a!.slot, 'kit account context slots increase');
  t.equal(a!.rentEpoch, U64_MAX, 'rentEpoch exact as bigint');
  t.equal(typeof a!.lamports, 'bigint');
  t.equal(a!.data[1], 'base64');
  t.equal(BigInt(Buffer.from(a!.data[0], 'base64').length), a!.space, 'space is the data length');
}
