// Batches forwarded with the client's own ids (src/rpc/ids.ts, answer.ts, batch.ts): which
// batches qualify, the one-walk check of a node's answer, and assembly: an answer in order
// is the client's answer as the node wrote it; anything else (out of order, short, one error
// object, a failed sub-batch) falls back to matching by id, with the same guarantees as the
// position path: order kept, ids and u64 values byte-exact, 7502 in place of what is missing.

import t from 'tap';
import { planOf } from '../../helpers/batch-plan.js';
import { answerInOrder } from '../../../src/rpc/answer.js';
import { assembleBatch, sliceSubBatch, type SubOutcome } from '../../../src/rpc/batch.js';
import { echoedId, IdTable } from '../../../src/rpc/ids.js';
import { rng } from '../../../src/tools/rng.js';

const b = (s: string): Buffer => Buffer.from(s, 'utf8');
const U64 = '18446744073709551615';

const call = (id: string, method = 'getBalance', params = '["Acc1"]'): string => `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${params}}`;
const batchOf = (ids: string[]): Buffer => b('[' + ids.map((id) => call(id)).join(',') + ']');
const answer = (id: string, result: string): string => `{"jsonrpc":"2.0","result":${result},"id":${id}}`;

function ok(from: number, to: number, response: string | Buffer): SubOutcome {
  return { from, to, response: typeof response === 'string' ? b(response) : response, error: null, errorData: null };
}

t.test('echoedId: plain integers and short plain strings; everything an encoder could write otherwise is not', async (t) => {
  const value = (id: string): number => echoedId(b(id), 0, id.length);
  t.equal(value('0'), 0);
  t.equal(value('7'), 7);
  t.equal(value('-12'), -12);
  t.equal(value('999999999999999'), 999999999999999, '15 digits');
  t.equal(value('"a-Z_0.9:x"'), -1, 'plain string');
  t.equal(value('""'), -1, 'empty string');
  for (const id of [
    '-0',
    '1.0',
    '1e3',
    '1E3',
    '0.5',
    '1234567890123456',
    U64,
    '"é"',
    '"a b"',
    '"a\\"b"',
    '"\\u0041"',
    '"<tag>"',
    '"a/b"',
    'null',
    '"' + 'x'.repeat(65) + '"',
  ]) {
    t.ok(Number.isNaN(value(id)), `${id} is not forwarded as it is`);
  }
});

t.test('IdTable: finds ids by their bytes, refuses a second equal id', async (t) => {
  const body = b('"a" 12 "b" "12" 12');
  const spans = Int32Array.from([0, 3, 4, 6, 7, 10, 11, 15, 16, 18]);
  const table = new IdTable();
  table.reset(body, spans, 5);
  t.same(
    [0, 1, 2, 3].map((i) => table.add(i)),
    [true, true, true, true],
  );
  t.equal(table.add(4), false, '12 twice');
  t.equal(table.find(b('x"12"'), 1, 5), 3, 'the string "12" is not the number 12');
  t.equal(table.find(b('12'), 0, 2), 1);
  t.equal(table.find(b('13'), 0, 2), -1);
  // many ids: the table grows and still finds each
  const many = b(Array.from({ length: 3000 }, (_, i) => `"k${i}"`).join(','));
  const ms = new Int32Array(6000);
  let at = 0;
  for (let i = 0; i < 3000; i++) {
    ms[2 * i] = at;
    at += `"k${i}"`.length;
    ms[2 * i + 1] = at;
    at++;
  }
  table.reset(many, ms, 3000);
  let added = 0;
  for (let i = 0; i < 3000; i++) if (table.add(i)) added++;
  t.equal(added, 3000);
  t.equal(table.find(b('"k2999"'), 0, 7), 2999);
});

t.test('analyze: which batches keep their ids upstream', async (t) => {
  const kept = (text: string): boolean => planOf(b(text)).idsKept;
  t.equal(kept(batchOf(['1', '2', '3']).toString()), true, 'rising integers');
  t.equal(kept(batchOf(['3', '"x"', '1', '-4']).toString()), true, 'distinct ids in any order');
  t.equal(kept(batchOf(['"550e8400-e29b-41d4-a716-446655440000"', '"b"']).toString()), true, 'uuid strings');
  t.equal(kept(batchOf(['1', '2', '1']).toString()), false, 'duplicate ids');
  t.equal(kept(batchOf(['"a"', '"b"', '"a"']).toString()), false, 'duplicate string ids');
  t.equal(kept(batchOf(['1', 'null']).toString()), false, 'a null id');
  t.equal(kept(batchOf(['1', U64]).toString()), false, 'a 20-digit id');
  t.equal(kept(batchOf(['1', '2.0']).toString()), false, 'an id with a fraction');
  t.equal(kept(batchOf(['1', '"\\u0041"']).toString()), false, 'an escaped string id');
  t.equal(kept(`[${call('1')},{"jsonrpc":"2.0","method":"getSlot"}]`), false, 'a notification');
  t.equal(kept(`[${call('1')},{"jsonrpc":"1.0","id":2,"method":"getSlot"}]`), false, 'an invalid element');
  t.equal(kept(`[${call('1')},5]`), false, 'a non-object element');
  t.equal(kept(`[${call('1')},{"jsonrpc":"2.0","id":2,"id":3,"method":"getSlot"}]`), false, 'an id given twice');
  t.equal(kept(`[{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}]`), false, 'a method given twice');
  t.equal(kept(' [ ' + call('1') + ' ,\n ' + call('2') + ' ] '), true, 'whitespace anywhere');
});

t.test('analyze: a method written like the previous call is the same name; escapes and invalid neighbours are decoded', async (t) => {
  const plan = planOf(
    b(
      '[' +
        [
          '{"jsonrpc":"2.0","id":1,"method":"getSlot"}',
          '{"jsonrpc":"2.0","id":2,"method":"getSlot"}',
          '{"jsonrpc":"1.0","id":3,"method":"getBalance"}',
          '{"jsonrpc":"2.0","id":4,"method":"getBalance"}',
          '{"jsonrpc":"2.0","id":5,"method":"get\\u0053lot"}',
          '{"jsonrpc":"2.0","id":6,"method":"get\\u0053lot"}',
          '{"jsonrpc":"2.0","id":7,"method":"getSlot","method":"getHealth"}',
          '{"jsonrpc":"2.0","id":8,"method":"getHealth"}',
        ].join(',') +
        ']',
    ),
  );
  t.same(plan.methods, ['getSlot', 'getSlot', '', 'getBalance', 'getSlot', 'getSlot', 'getHealth', 'getHealth']);
});

t.test('answerInOrder: the range ids in order, each once, nothing more', async (t) => {
  const body = batchOf(['1', '"x"', '12']);
  const plan = planOf(body);
  const check = (resp: string, from = 0, to = 3): boolean => answerInOrder(b(resp), body, plan.idSpans, from, to);
  const r = ['{"jsonrpc":"2.0","result":{"a":["}",{"id":9}]},"id":1}', '{"id":"x","result":"\\"id\\":12}"}', '{"result":2,"id":12}'];
  t.equal(check('[' + r.join(',') + ']'), true, 'in order, nested ids and brackets in strings ignored');
  t.equal(check(' \n[ ' + r.join(' ,\n ') + ' ]\n'), true, 'whitespace');
  t.equal(check('[' + r.slice(0, 2).join(',') + ']', 0, 2), true, 'a sub-batch range');
  t.equal(check('[' + r[2] + ']', 2, 3), true, 'the last element alone');
  t.equal(check('[' + [r[1], r[0], r[2]].join(',') + ']'), false, 'out of order');
  t.equal(check('[' + r.slice(0, 2).join(',') + ']'), false, 'one missing');
  t.equal(check('[' + [...r, r[2]].join(',') + ']'), false, 'one extra');
  t.equal(check('[' + [r[0], r[1], '{"result":2,"id":1}'].join(',') + ']'), false, '1 is not 12');
  t.equal(check('[' + [r[0], r[1], '{"result":2,"id":123}'].join(',') + ']'), false, '123 is not 12');
  t.equal(check('[' + [r[0], r[1], '{"result":2,"id":"12"}'].join(',') + ']'), false, '"12" is not 12');
  t.equal(check('[' + [r[0], r[1], '{"id":12,"result":2,"id":12}'].join(',') + ']'), false, 'an id twice');
  t.equal(check('[' + [r[0], r[1], '{"result":{"id":12}}'].join(',') + ']'), false, 'only a nested id');
  t.equal(check('{"jsonrpc":"2.0","error":{"code":-32005,"message":"Node is unhealthy"},"id":null}'), false, 'one error object');
  t.equal(check('[]'), false);
  t.equal(check(''), false);
  t.equal(check('[' + r.join(',')), false, 'cut short');
  t.equal(check('[' + r.join(',') + '] x'), false, 'trailing bytes');
});

t.test('assembleBatch, ids kept: an answer in order is the answer, the same bytes', async (t) => {
  const body = batchOf(['1', '2', '"c"']);
  const plan = planOf(body);
  t.equal(plan.idsKept, true);
  const resp = b('[' + [answer('1', `{"v":${U64}}`), answer('2', '2'), answer('"c"', '3')].join(',') + ']\n');
  const r = assembleBatch(body, plan, null, [ok(0, 3, resp)]);
  t.equal(r.answered, true);
  t.equal(r.merged, resp, 'no copy, no rebuild');
});

t.test('sliceSubBatch and joined sub-batch answers', async (t) => {
  const ids = ['1', '2', '3', '4', '5'];
  const body = b('[' + ids.map((id) => call(id)).join(' , ') + ']');
  const plan = planOf(body);
  t.equal(sliceSubBatch(body, plan, 0, 2).toString(), '[' + call('1') + ' , ' + call('2') + ']', "the client's bytes of the range");
  t.equal(sliceSubBatch(body, plan, 4, 5).toString(), '[' + call('5') + ']');
  const part = (from: number, to: number, ws = ''): string =>
    ws +
    '[' +
    ws +
    ids
      .slice(from, to)
      .map((id) => answer(id, id))
      .join(',' + ws) +
    ws +
    ']' +
    ws;
  // sub-batches finish in any order; the answer follows the request
  const r = assembleBatch(body, plan, null, [ok(4, 5, part(4, 5, ' ')), ok(0, 2, part(0, 2)), ok(2, 4, part(2, 4, '\n'))]);
  const inner = (from: number, to: number, ws = ''): string =>
    ids
      .slice(from, to)
      .map((id) => answer(id, id))
      .join(',' + ws);
  t.equal(
    r.merged!.toString(),
    '[' + inner(0, 2) + ',' + inner(2, 4, '\n') + ',' + inner(4, 5) + ']',
    'each part as the node wrote it, in request order, in one array',
  );
});

t.test('assembleBatch, ids kept: out of order, short, one error object or a failed part fall back to matching by id', async (t) => {
  const ids = ['7', '"x"', '12', '-3'];
  const body = batchOf(ids);
  const plan = planOf(body);
  t.equal(plan.idsKept, true);
  const res = (id: string): string => answer(id, `{"for":${id},"big":${U64}}`);
  const expected = '[' + ids.map(res).join(',') + ']';

  const shuffled = assembleBatch(body, plan, null, [ok(0, 4, '[' + [res('12'), res('-3'), res('"x"'), res('7')].join(',') + ']')]);
  t.equal(shuffled.merged!.toString(), expected, 'out of order: put back in order, bytes exact');

  const split = assembleBatch(body, plan, null, [ok(0, 2, '[' + res('"x"') + ',' + res('7') + ']'), ok(2, 4, '[' + res('12') + ',' + res('-3') + ']')]);
  t.equal(split.merged!.toString(), expected, 'one sub-batch out of order, the other in order');

  const short = assembleBatch(body, plan, null, [ok(0, 4, '[' + [res('7'), res('12'), res('-3'), answer('99', '0')].join(',') + ']')]);
  const entries = JSON.parse(short.merged!.toString()) as { id: unknown; error?: { code: number }; result?: unknown }[];
  t.same(
    entries.map((e) => e.id),
    [7, 'x', 12, -3],
  );
  t.equal(entries[1]!.error?.code, 7502, 'the missing element is 7502 in its place');
  t.ok(short.merged!.toString().includes(`"big":${U64}`), 'u64 results kept');

  const whole = assembleBatch(body, plan, null, [ok(0, 4, '{"jsonrpc":"2.0","error":{"code":-32005,"message":"Node is unhealthy"},"id":null}')]);
  t.same(
    (JSON.parse(whole.merged!.toString()) as { id: unknown; error: { code: number } }[]).map((e) => [e.id, e.error.code]),
    [
      [7, -32005],
      ['x', -32005],
      [12, -32005],
      [-3, -32005],
    ],
    'one error object answers every element, each with its own id',
  );

  const failed: SubOutcome = { from: 2, to: 4, response: null, error: { code: 7504, http: 504, message: 'Node timed out' }, errorData: { attempts: 1 } };
  const part = assembleBatch(body, plan, null, [ok(0, 2, '[' + res('7') + ',' + res('"x"') + ']'), failed]);
  t.equal(part.answered, true);
  t.same(
    (JSON.parse(part.merged!.toString()) as { id: unknown; error?: { code: number } }[]).map((e) => [e.id, e.error?.code ?? 0]),
    [
      [7, 0],
      ['x', 0],
      [12, 7504],
      [-3, 7504],
    ],
  );
  const none = assembleBatch(body, plan, null, [{ ...failed, from: 0, to: 4 }]);
  t.equal(none.answered, false, 'nothing answered');
});

t.test('property: random kept batches through a node that reorders, drops and rejects come back in order, bytes exact', async (t) => {
  const r = rng(97531);
  const int = (n: number): number => Math.floor(r() * n);
  const ws = (): string => (r() < 0.7 ? '' : [' ', '\n', ' \r\n '][int(3)]!);
  const shuffle = <T>(xs: T[]): void => {
    for (let i = xs.length - 1; i > 0; i--) {
      const j = int(i + 1);
      [xs[i], xs[j]] = [xs[j]!, xs[i]!];
    }
  };
  let rounds = 0;
  let inPlace = 0;
  for (let round = 0; round < 300; round++) {
    const n = 1 + int(30);
    const pool = new Set<string>();
    while (pool.size < n) pool.add(r() < 0.5 ? String(int(2000) - 100) : `"id-${int(5000)}"`);
    const ids = [...pool];
    const body = b(ws() + '[' + ws() + ids.map((id) => call(id, r() < 0.5 ? 'getBalance' : 'getSlot')).join(ws() + ',' + ws()) + ws() + ']' + ws());
    const plan = planOf(body);
    if (!plan.idsKept) {
      t.fail('distinct plain ids must be kept', { body: body.toString() });
      return;
    }
    const outcomes: SubOutcome[] = [];
    const want: string[] = [];
    for (let from = 0; from < n;) {
      const to = Math.min(n, from + 1 + int(10));
      const sent = JSON.parse(sliceSubBatch(body, plan, from, to).toString()) as { id: unknown }[];
      const els = sent.map((c) => answer(JSON.stringify(c.id), `{"id":${JSON.stringify(c.id)},"u":${U64}}`));
      const mode = r();
      if (mode < 0.05) {
        outcomes.push(ok(from, to, '{"jsonrpc":"2.0","error":{"code":-32005,"message":"x"},"id":null}'));
        for (let k = from; k < to; k++) want.push(`{"jsonrpc":"2.0","error":{"code":-32005,"message":"x"},"id":${ids[k]}}`);
      } else {
        for (let k = from; k < to; k++) want.push(els[k - from]!);
        const shown = [...els];
        if (mode < 0.3) shuffle(shown);
        if (mode > 0.9 && shown.length > 1) {
          const k = int(shown.length);
          const dropped = JSON.parse(shown.splice(k, 1)[0]!) as { id: unknown };
          want[want.length - els.length + sent.findIndex((c) => JSON.stringify(c.id) === JSON.stringify(dropped.id))] = 'MISSING';
        }
        outcomes.push(ok(from, to, ws() + '[' + shown.join(',' + ws()) + ']' + ws()));
      }
      from = to;
    }
    shuffle(outcomes); // sub-batches finish in any order
    const merged = assembleBatch(body, plan, null, outcomes).merged!.toString();
    const got = JSON.parse(merged) as { id: unknown; error?: { code: number } }[];
    if (got.length !== n) {
      t.fail(`round ${round}: ${got.length} entries for ${n}`, { merged });
      return;
    }
    for (let k = 0; k < n; k++) {
      if (want[k] === 'MISSING') {
        if (got[k]!.error?.code !== 7502 || JSON.stringify(got[k]!.id) !== ids[k]) {
          t.fail(`round ${round}: entry ${k} should be 7502 for id ${ids[k]}`, { merged });
          return;
        }
      } else if (!merged.includes(want[k]!)) {
        t.fail(`round ${round}: entry ${k} not byte-exact`, {
          want: want[k],
          merged,
          body: body.toString(),
          answers: outcomes.map((o) => [o.from, o.to, o.response!.toString()]),
        });
        return;
      }
      if (JSON.stringify(got[k]!.id) !== ids[k]) {
        t.fail(`round ${round}: entry ${k} has id ${JSON.stringify(got[k]!.id)}, want ${ids[k]}`, { merged });
        return;
      }
    }
    if (outcomes.every((o) => want.slice(o.from, o.to).every((w) => w !== 'MISSING'))) inPlace++;
    rounds++;
  }
  t.equal(rounds, 300, 'every round in order with exact bytes');
  t.ok(inPlace > 100, `${inPlace} rounds without a dropped element`);
});
