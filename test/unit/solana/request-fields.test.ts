import t from 'tap';
import { Commitment } from '../../../src/solana/chain-view.js';
import { readCallFields, readFields, SolanaFields } from '../../../src/solana/request-fields.js';
import { TxEncoding } from '../../../src/solana/transaction-bytes.js';

function read(method: string, params: string): SolanaFields {
  const body = Buffer.from(`{"jsonrpc":"2.0","id":1,"method":"${method}","params":${params}}`);
  const start = body.indexOf('"params":') + 9;
  const out = new SolanaFields();
  readFields(method, body, start, body.length - 1, out);
  if (out.txStart >= 0) (out as SolanaFields & { tx: string }).tx = body.toString('latin1', out.txStart, out.txEnd);
  return out;
}

t.test('commitment and minContextSlot from the config object', async (t) => {
  let f = read('getBalance', '["So11111111111111111111111111111111111111112", {"commitment":"confirmed","minContextSlot":123456789}]');
  t.equal(f.commitment, Commitment.Confirmed);
  t.equal(f.minContextSlot, 123456789);
  f = read('getSlot', '[{ "minContextSlot" : 5 }]');
  t.equal(f.commitment, -1, 'absent: the default applies');
  t.equal(f.minContextSlot, 5);
  f = read('getMultipleAccounts', '[["a","b"],{"encoding":"base64","commitment":"processed"}]');
  t.equal(f.commitment, Commitment.Processed);
  t.equal(f.minContextSlot, -1);
  f = read('getSlot', '[]');
  t.equal(f.commitment, -1);
  t.equal(f.minContextSlot, -1);
  f = read('getSlot', '[{"minContextSlot":-1,"commitment":"max"}]');
  t.equal(f.minContextSlot, -1, 'not a slot: left to the node to refuse');
  t.equal(f.commitment, -1);
  f = read('getSlot', '[{"minContextSlot":"12"}]');
  t.equal(f.minContextSlot, -1);
  f = read('getSlot', '{"minContextSlot":12}');
  t.equal(f.minContextSlot, -1, 'params must be an array');
});

t.test('sendTransaction: the transaction, its encoding, the preflight commitment', async (t) => {
  let f = read('sendTransaction', '["AQID", {"encoding":"base64","preflightCommitment":"processed","minContextSlot":9}]') as SolanaFields & { tx?: string };
  t.equal(f.tx, 'AQID');
  t.equal(f.txEncoding, TxEncoding.Base64);
  t.equal(f.commitment, Commitment.Processed);
  t.equal(f.minContextSlot, 9);
  f = read('sendTransaction', '["3vZ"]') as SolanaFields & { tx?: string };
  t.equal(f.tx, '3vZ');
  t.equal(f.txEncoding, TxEncoding.Base58, 'base58 is the default');
  f = read('sendTransaction', '["3vZ",{"encoding":"json"}]');
  t.equal(f.txStart, -1, 'an encoding the node refuses: nothing to route by');
  f = read('sendTransaction', '["a\\u0041b"]');
  t.equal(f.txStart, -1, 'escapes are not a transaction we read');
  f = read('sendTransaction', '[12]');
  t.equal(f.txStart, -1);
});

t.test("a single call's fields: from the request scan's params span, or found in the body without it", async (t) => {
  const body = Buffer.from(' {"jsonrpc":"2.0","id":1,"method":"getBalance","params":["x",{"commitment":"confirmed","minContextSlot":77}]}');
  const start = body.indexOf('"params":') + 9;
  const given = new SolanaFields();
  const found = new SolanaFields();
  t.ok(readCallFields('getBalance', body, start, body.length - 1, given), 'span given');
  t.ok(readCallFields('getBalance', body, -1, -1, found), 'span found (leading whitespace skipped)');
  t.same([found.commitment, found.minContextSlot], [given.commitment, given.minContextSlot]);
  t.same([given.commitment, given.minContextSlot], [Commitment.Confirmed, 77]);
  const none = new SolanaFields();
  none.minContextSlot = 5;
  t.notOk(readCallFields('getSlot', Buffer.from('{"jsonrpc":"2.0","id":1,"method":"getSlot"}'), -1, -1, none), 'no params');
  t.equal(none.minContextSlot, -1, 'and the fields are reset');
});
