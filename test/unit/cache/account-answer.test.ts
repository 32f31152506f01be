// The account cache's answers byte for byte against the simulator's Agave-shaped ones: each
// request under test goes to a simulated node in one batch with a base64 read of the same keys
// (one batch is answered at one slot), the base64 answer gives the states, and accountAnswer
// must print exactly what the node printed for the request under test. Two places where the
// simulator and Agave part are written out below: getMultipleAccounts' default encoding and
// the base58 size error's code.

import { randomBytes } from 'node:crypto';
import t from 'tap';
import { accountAnswer } from '../../../src/cache/account-answer.js';
import { accountFromRpc, accountsFromRpcBody } from '../../../src/cache/account-from-rpc.js';
import { readAccountRequest } from '../../../src/cache/account-read.js';
import type { AccountValue } from '../../../src/cache/account-value.js';
import { answerElements, rawIdOf, trimmedSpan } from '../../../src/rpc/scan.js';
import { encodeBase58 } from '../../../src/solana/base58.js';
import { startSim } from '../../../src/tools/sim/node.js';
import { eventually } from '../../helpers/eventually.js';

const SYSTEM = '11111111111111111111111111111111';
const CLOCK = 'SysvarC1ock11111111111111111111111111111111'; // 40 bytes
const RENT = 'SysvarRent111111111111111111111111111111111'; // 17 bytes
const TOKEN = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA'; // executable, not the native loader
const SLOT_HASHES = 'SysvarS1otHashes111111111111111111111111111'; // 20488 bytes: too long for base58
const MISSING = encodeBase58(randomBytes(32));
const FUNDED = encodeBase58(randomBytes(32)); // airdropped: rentEpoch u64::MAX

const ENCODINGS = [undefined, 'base64', 'base58', 'binary'] as const;
const SLICES = [undefined, { offset: 0, length: 10 }, { offset: 5, length: 1000 }, { offset: 100_000, length: 5 }, { offset: 3, length: 0 }];
const COMMITMENTS = [undefined, 'processed', 'confirmed', 'finalized'] as const;
const IDS = ['1', '"abc"', 'null', '12345678901234567890', '0'];

type Cfg = { encoding?: string; dataSlice?: { offset: number; length: number }; commitment?: string };

function config(encoding: string | undefined, slice: Cfg['dataSlice'], commitment: string | undefined): Cfg {
  const c: Cfg = {};
  if (encoding !== undefined) c.encoding = encoding;
  if (slice !== undefined) c.dataSlice = slice;
  if (commitment !== undefined) c.commitment = commitment;
  return c;
}

function body(id: string, method: string, params: unknown): string {
  return '{"jsonrpc":"2.0","id":' + id + ',"method":"' + method + '","params":' + JSON.stringify(params) + '}';
}

t.test('answers are the bytes the simulated node gives', async (t) => {
  const node = await startSim({ id: 'cache-answer', port: 0, slotMs: 50 });
  t.teardown(() => node.close());

  const post = async (text: string): Promise<Buffer> => {
    const r = await fetch(node.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
    return Buffer.from(await r.arrayBuffer());
  };
  /** The node's answers to the reference read and the request under test, from one batch. */
  const both = async (reference: string, request: string): Promise<[Buffer, Buffer]> => {
    const answer = await post('[' + reference + ',' + request + ']');
    const [s, e] = trimmedSpan(answer);
    const spans: number[] = [];
    if (answerElements(answer, s, e, spans) !== 2) t.fail('not two answers: ' + answer.toString());
    return [answer.subarray(spans[0], spans[1]), answer.subarray(spans[4], spans[5])];
  };

  await post(body('1', 'requestAirdrop', [FUNDED, 5_000_000_000]));
  await eventually('the airdrop finalized', async () => !(await post(body('1', 'getBalance', [FUNDED]))).toString().includes('"value":0}'), 20_000);

  let compared = 0;
  let n = 0;
  /** Compares the cache's answer to `request` with the node's; `expect` adjusts the node's where it is not Agave's. */
  const check = async (method: string, params: unknown[], expect?: (node: string) => string): Promise<string> => {
    const id = IDS[n++ % IDS.length]!;
    const request = body(id, method, params);
    const cfg = (params[1] ?? {}) as Cfg;
    const keys = method === 'getMultipleAccounts' ? (params[0] as string[]) : [params[0] as string];
    const refCfg = cfg.commitment === undefined ? { encoding: 'base64' } : { encoding: 'base64', commitment: cfg.commitment };
    const reference = method === 'getMultipleAccounts' ? body('0', method, [keys, refCfg]) : body('0', 'getAccountInfo', [keys[0], refCfg]);
    const [refAnswer, nodeAnswer] = await both(reference, request);
    const ref = accountsFromRpcBody(refAnswer);
    if (ref === undefined) throw new Error('unreadable reference ' + refAnswer.toString());
    const read = readAccountRequest(Buffer.from(request), method);
    if (read === null) throw new Error('refused ' + request);
    const rawId = rawIdOf(Buffer.from(request))!;
    const ours = accountAnswer(read, ref.slot, ref.states, ref.apiVersion, n % 2 === 0 ? rawId : Buffer.from(rawId)).toString();
    const theirs = expect === undefined ? nodeAnswer.toString() : expect(nodeAnswer.toString());
    if (ours !== theirs) t.equal(ours, theirs, request);
    compared++;
    return ours;
  };

  const small = [SYSTEM, CLOCK, RENT, TOKEN, MISSING, FUNDED];
  for (const commitment of COMMITMENTS) {
    for (const encoding of ENCODINGS) {
      for (const slice of SLICES) {
        const cfg = config(encoding, slice, commitment);
        for (const key of small) await check('getAccountInfo', [key, cfg]);
        // Agave's getMultipleAccounts defaults to base64 (getAccountInfo to binary); the
        // simulator uses binary for both: without an encoding, the node is asked for base64.
        if (encoding === undefined) {
          const asked = config('base64', slice, commitment);
          const whole = config('base64', undefined, commitment);
          const [refA, nodeA] = await both(body('0', 'getMultipleAccounts', [small, whole]), body('7', 'getMultipleAccounts', [small, asked]));
          const ref = accountsFromRpcBody(refA)!;
          const read = readAccountRequest(Buffer.from(body('7', 'getMultipleAccounts', [small, cfg])), 'getMultipleAccounts')!;
          t.equal(read.encoding, 'base64');
          const ours = accountAnswer(read, ref.slot, ref.states, ref.apiVersion, '7').toString();
          if (ours !== nodeA.toString()) t.equal(ours, nodeA.toString(), 'getMultipleAccounts without an encoding is base64');
          compared++;
        } else await check('getMultipleAccounts', [small, cfg]);
        // The big account: fine in base64, too long in base58 unless sliced short.
        await check('getAccountInfo', [SLOT_HASHES, cfg], base58Code);
        if (encoding !== undefined) await check('getMultipleAccounts', [[MISSING, SLOT_HASHES, SYSTEM], cfg], base58Code);
      }
      await check('getBalance', commitment === undefined ? [FUNDED] : [FUNDED, { commitment }]);
    }
  }
  for (const key of [...small, SLOT_HASHES]) {
    await check('getBalance', [key]);
    await check('getBalance', [key, null]);
    await check('getAccountInfo', [key], base58Code);
    await check('getAccountInfo', [key, null], base58Code);
  }
  await check('getMultipleAccounts', [[], { encoding: 'base64' }]);
  await check('getMultipleAccounts', [[CLOCK, CLOCK, MISSING], { encoding: 'base58' }]);
  await check('getAccountInfo', [SLOT_HASHES, { encoding: 'base58', dataSlice: { offset: 0, length: 128 } }]);
  await check('getAccountInfo', [SLOT_HASHES, { encoding: 'binary', dataSlice: { offset: 20488 - 128, length: 500 } }]);
  const tooLong = await check('getAccountInfo', [SLOT_HASHES, { encoding: 'binary', dataSlice: { offset: 20488 - 129, length: 500 } }], base58Code);
  t.match(
    tooLong,
    /^\{"jsonrpc":"2\.0","error":\{"code":-32600,"message":"Encoded binary \(base 58\) data should be less than 128 bytes, please use Base64 encoding\."\},"id":/,
  );
  const funded = await check('getAccountInfo', [FUNDED, { encoding: 'base64' }]);
  t.match(funded, /"rentEpoch":18446744073709551615,/, 'u64::MAX is printed from its digits');
  t.ok(compared > 500, `${compared} answers compared`);
});

/**
 * Agave's encode_account gives its base58 size error as ErrorCode::InvalidRequest (-32600);
 * the simulator says -32602. The cache follows Agave.
 */
function base58Code(node: string): string {
  return node.replace('{"code":-32602,"message":"Encoded binary (base 58)', '{"code":-32600,"message":"Encoded binary (base 58)');
}

const STATE: AccountValue = {
  lamports: '18446744073709551000',
  owner: SYSTEM,
  executable: false,
  rentEpoch: '18446744073709551615',
  data: Buffer.from([1, 2, 3]),
};

t.test('u64 digits and ids are copied as they are', async (t) => {
  const read = readAccountRequest(Buffer.from(body('1', 'getAccountInfo', [CLOCK, { encoding: 'base64' }])), 'getAccountInfo')!;
  const text = accountAnswer(read, 42, [STATE], '2.2.7', Buffer.from('"x\\"y"')).toString();
  t.equal(
    text,
    '{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.2.7","slot":42},"value":{"data":["AQID","base64"],"executable":false,"lamports":18446744073709551000,"owner":"11111111111111111111111111111111","rentEpoch":18446744073709551615,"space":3}},"id":"x\\"y"}',
  );
  t.equal(accountAnswer(read, 42, [STATE], '2.2.7', '"x\\"y"').toString(), text, 'the same bytes a second time (cached pieces) and from a string id');
  const balance = readAccountRequest(Buffer.from(body('9', 'getBalance', [CLOCK])), 'getBalance')!;
  t.equal(
    accountAnswer(balance, 7, [STATE], '2.1.0', '9').toString(),
    '{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.1.0","slot":7},"value":18446744073709551000},"id":9}',
  );
  t.equal(
    accountAnswer(balance, 7, [null], '2.1.0', '9').toString(),
    '{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.1.0","slot":7},"value":0},"id":9}',
  );
  const multi = readAccountRequest(
    Buffer.from(body('"é"', 'getMultipleAccounts', [[CLOCK, RENT], { dataSlice: { offset: 1, length: 1 } }])),
    'getMultipleAccounts',
  )!;
  t.equal(
    accountAnswer(multi, 1, [null, STATE], '2.1.0', Buffer.from('"é"')).toString(),
    '{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.1.0","slot":1},"value":[null,{"data":["Ag==","base64"],"executable":false,"lamports":18446744073709551000,"owner":"11111111111111111111111111111111","rentEpoch":18446744073709551615,"space":3}]},"id":"é"}',
  );
});

t.test('states from a node answer body keep their digits; malformed answers are undefined', async (t) => {
  const account = '{"data":["AQID","base64"],"executable":true,"lamports":9007199254740993,"owner":"' + CLOCK + '","rentEpoch":18446744073709551615,"space":3}';
  const got = accountsFromRpcBody(Buffer.from(' {"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.1.0","slot":12},"value":' + account + '},"id":1}\n'));
  t.same(got, {
    slot: 12,
    apiVersion: '2.1.0',
    states: [{ lamports: '9007199254740993', owner: CLOCK, executable: true, rentEpoch: '18446744073709551615', data: Buffer.from([1, 2, 3]) }],
  });
  const many = accountsFromRpcBody(
    Buffer.from('{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.1.0","slot":12},"value":[null, ' + account + ']},"id":"a"}'),
  );
  t.equal(many?.states.length, 2);
  t.equal(many?.states[0], null);
  t.same(accountsFromRpcBody(Buffer.from('{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.1.0","slot":12},"value":null},"id":1}'))?.states, [null]);
  const bad = [
    '{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params"},"id":1}',
    '{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.1.0","slot":12},"value":' + account.replace('base64"]', 'base58"]') + '},"id":1}',
    '{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.1.0","slot":12},"value":' + account.replace('"space":3', '"space":4') + '},"id":1}',
    '{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.1.0","slot":12},"value":' +
      account.replace('18446744073709551615', '18446744073709551616') +
      '},"id":1}',
    '{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.1.0","slot":12},"value":' + account.replace('AQID', 'AQI!') + '},"id":1}',
    '{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.1.0","slot":12},"value":' +
      account.replace('"lamports":9007199254740993', '"lamports":-1') +
      '},"id":1}',
    '{"jsonrpc":"2.0","result":{"context":{"slot":12},"value":null},"id":1}',
    '{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.1.0","slot":12},"value":' + account + '},"id":1',
    '[{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.1.0","slot":12},"value":null},"id":1}]',
  ];
  for (const b of bad) t.equal(accountsFromRpcBody(Buffer.from(b)), undefined, b);
});

t.test('accountFromRpc reads a parsed value; u64::MAX survives JSON.parse', async (t) => {
  const v = JSON.parse(
    '{"data":["","base64"],"executable":false,"lamports":5000000000,"owner":"' + SYSTEM + '","rentEpoch":18446744073709551615,"space":0}',
  ) as unknown;
  t.same(accountFromRpc(v), { lamports: '5000000000', owner: SYSTEM, executable: false, rentEpoch: '18446744073709551615', data: Buffer.alloc(0) });
  t.equal(accountFromRpc(null), null);
  t.equal(
    accountFromRpc(JSON.parse('{"data":["","base64"],"executable":false,"lamports":9007199254740993,"owner":"' + SYSTEM + '","rentEpoch":0,"space":0}')),
    undefined,
    'rounded lamports',
  );
  t.equal(accountFromRpc({ data: 'abc', executable: false, lamports: 1, owner: SYSTEM, rentEpoch: 0, space: 2 }), undefined, 'binary data');
  t.equal(accountFromRpc({ data: ['', 'base64'], executable: 'no', lamports: 1, owner: SYSTEM, rentEpoch: 0, space: 0 }), undefined);
  t.equal(accountFromRpc({ data: ['', 'base64'], executable: false, lamports: 1, owner: 'nope', rentEpoch: 0, space: 0 }), undefined);
  t.equal(accountFromRpc([]), undefined);
});
