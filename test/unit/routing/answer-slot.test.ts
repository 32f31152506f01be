// The slot read from a node's answer bytes (src/routing/answer-slot.ts).

import t from 'tap';
import { answerSlot } from '../../../src/routing/answer-slot.js';

const b = (s: string): Buffer => Buffer.from(s);

t.test('getSlot: the numeric result, only when the call is getSlot', async (t) => {
  t.equal(answerSlot(b('{"jsonrpc":"2.0","result":312345678,"id":1}'), true), 312345678);
  t.equal(answerSlot(b('{"jsonrpc":"2.0","id":"x","result" : 7}'), true), -1, 'a space before the colon is not the compact form: ignored');
  t.equal(answerSlot(b('{"jsonrpc":"2.0","result": 42,"id":1}'), true), 42, 'whitespace after the colon');
  t.equal(answerSlot(b('{"jsonrpc":"2.0","result":312345678,"id":1}'), false), -1, 'a number from another method is no slot');
  t.equal(answerSlot(b('{"jsonrpc":"2.0","error":{"code":-32005,"message":"Node is unhealthy"},"id":1}'), true), -1);
});

t.test('RpcResponse: context.slot, apiVersion first or not, with whitespace', async (t) => {
  t.equal(answerSlot(b('{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.1.0","slot":341197053},"value":5},"id":1}'), false), 341197053);
  t.equal(answerSlot(b('{"jsonrpc":"2.0","result":{"context":{"slot":9},"value":null},"id":1}'), false), 9);
  t.equal(answerSlot(b('{ "jsonrpc": "2.0", "result": { "context" : { "slot" : 12 }, "value": 1 }, "id": 1 }'), false), 12);
  t.equal(answerSlot(b('{"jsonrpc":"2.0","result":{"value":{"context":{"slot":5}}},"id":1}'), false), -1, 'a context that does not open the result is ignored');
  t.equal(answerSlot(b('{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.1.0"},"slot":7},"id":1}'), false), -1, 'a slot outside the context is ignored');
  t.equal(
    answerSlot(b('{"jsonrpc":"2.0","result":"\\"result\\":{\\"context\\":{\\"slot\\":99}}","id":1}'), false),
    -1,
    'a string holding the pattern is not read',
  );
});

t.test('a large answer: its head decides, whatever its 4 MB hold', async (t) => {
  // What a read costs is measured by the benchmarks (docs/benchmarks.md "Monotonic reads across
  // failover"), not here: a test holds no wall-clock limit.
  const data = 'A'.repeat(4_000_000) + '\\"context\\":{\\"slot\\":99}';
  t.equal(answerSlot(b('{"jsonrpc":"2.0","result":[{"pubkey":"x","account":{"data":"' + data + '"}}],"id":1}'), false), -1, 'no slot at the head');
  t.equal(answerSlot(b('{"jsonrpc":"2.0","result":{"context":{"slot":5},"value":[{"data":"' + data + '"}]},"id":1}'), false), 5, "the head's slot");
});

t.test('batch answers: the highest slot of any element', async (t) => {
  const batch =
    '[{"jsonrpc":"2.0","result":{"context":{"slot":10},"value":1},"id":1},{"jsonrpc":"2.0","result":{"context":{"slot":30},"value":2},"id":2},{"jsonrpc":"2.0","result":{"context":{"slot":20},"value":3},"id":3}]';
  t.equal(answerSlot(b(batch), false), 30);
  t.equal(answerSlot(b('[{"jsonrpc":"2.0","result":5,"id":1},{"jsonrpc":"2.0","result":8,"id":2}]'), true), 8);
  t.equal(answerSlot(b('[{"jsonrpc":"2.0","error":{"code":1,"message":"x"},"id":1}]'), false), -1);
});

t.test('the result key found wherever it is: near the head, or past the first bytes', async (t) => {
  const pad = '"x":"' + 'y'.repeat(300) + '",';
  t.equal(answerSlot(b('{"jsonrpc":"2.0",' + pad + '"result":{"context":{"slot":77},"value":1},"id":1}'), false), 77);
  for (let n = 100; n < 160; n++) {
    const body = '{"i":"' + 'z'.repeat(n) + '","result":5}';
    if (answerSlot(b(body), true) !== 5) t.fail(`missed at padding ${n}`);
  }
  t.pass('found at every offset around the near/far boundary');
});
