// Which account reads the cache takes, with what parameters, and which it leaves to a node:
// Agave's defaults (finalized; binary for getAccountInfo, base64 for getMultipleAccounts), and
// null for every form Agave refuses or that the cache does not read.

import t from 'tap';
import { readAccountRequest, type AccountRead } from '../../../src/cache/account-read.js';

const KEY = 'SysvarC1ock11111111111111111111111111111111';
const KEY2 = '11111111111111111111111111111111';

function read(text: string, method = 'getAccountInfo'): AccountRead | null {
  return readAccountRequest(Buffer.from(text), method);
}

function call(method: string, params: string, id = '1'): string {
  return '{"jsonrpc":"2.0","id":' + id + ',"method":"' + method + '","params":' + params + '}';
}

t.test('defaults as Agave', async (t) => {
  const base = { sliceOffset: 0, sliceLength: -1, minContextSlot: -1, commitment: 2 };
  t.same(read(call('getAccountInfo', `["${KEY}"]`)), { ...base, method: 0, keys: [KEY], encoding: 'binary' }, 'getAccountInfo: binary');
  t.same(read(call('getAccountInfo', `["${KEY}",null]`)), { ...base, method: 0, keys: [KEY], encoding: 'binary' }, 'a null config');
  t.same(read(call('getAccountInfo', `["${KEY}",{}]`)), { ...base, method: 0, keys: [KEY], encoding: 'binary' }, 'an empty config');
  t.same(
    read(call('getMultipleAccounts', `[["${KEY}","${KEY2}"]]`), 'getMultipleAccounts'),
    { ...base, method: 1, keys: [KEY, KEY2], encoding: 'base64' },
    'getMultipleAccounts: base64',
  );
  t.same(read(call('getBalance', `["${KEY}"]`), 'getBalance'), { ...base, method: 2, keys: [KEY], encoding: 'base64' }, 'getBalance');
  t.same(read(call('getMultipleAccounts', '[[]]'), 'getMultipleAccounts')?.keys, [], 'no keys: an empty list, as Agave');
});

t.test('every option read', async (t) => {
  const r = read(
    ' {"method":"getAccountInfo", "params":[ "' +
      KEY +
      '", {"minContextSlot":123,"dataSlice":{"length":32,"offset":8},"commitment":"processed","encoding":"base58"}],"id":"x","jsonrpc":"2.0"}\n',
  );
  t.same(r, { method: 0, keys: [KEY], commitment: 0, encoding: 'base58', sliceOffset: 8, sliceLength: 32, minContextSlot: 123 });
  t.equal(read(call('getAccountInfo', `["${KEY}",{"commitment":"confirmed","encoding":"binary"}]`))?.commitment, 1);
  t.equal(read(call('getAccountInfo', `["${KEY}",{"encoding":"base64"}]`))?.encoding, 'base64');
  t.equal(read(call('getMultipleAccounts', `[["${KEY}"],{"encoding":"binary"}]`), 'getMultipleAccounts')?.encoding, 'binary');
  t.same(read(call('getBalance', `["${KEY}",{"commitment":"confirmed","minContextSlot":0}]`), 'getBalance')?.minContextSlot, 0);
  const nulls = read(call('getAccountInfo', `["${KEY}",{"commitment":null,"encoding":null,"dataSlice":null,"minContextSlot":null}]`));
  t.same(nulls, { method: 0, keys: [KEY], commitment: 2, encoding: 'binary', sliceOffset: 0, sliceLength: -1, minContextSlot: -1 }, 'null options are absent');
  t.equal(read(call('getAccountInfo', `["${KEY}"]`, 'null'))?.method, 0, 'a null id');
  t.equal(read(call('getAccountInfo', `["${KEY}"]`, '18446744073709551615'))?.method, 0, 'u64::MAX id');
  t.equal(read(call('getAccountInfo', `["${KEY}",{"dataSlice":{"offset":9007199254740991,"length":0}}]`))?.sliceOffset, 9007199254740991);
  const hundred = JSON.stringify(Array.from({ length: 100 }, () => KEY));
  t.equal(read(call('getMultipleAccounts', `[${hundred}]`), 'getMultipleAccounts')?.keys.length, 100);
  t.equal(read(call('getAccountInfo', `["${KEY}",{"encoding":"base64"}]`, '"a-é\\u00e9"'))?.encoding, 'base64', 'a string id with escapes');
});

t.test('refused: the node answers', async (t) => {
  const refused: [string, string, string][] = [
    ['batch', 'getAccountInfo', '[' + call('getAccountInfo', `["${KEY}"]`) + ']'],
    ['not JSON', 'getAccountInfo', '{"jsonrpc":"2.0",'],
    ['empty', 'getAccountInfo', ''],
    ['unknown method', 'getSlot', call('getSlot', '[]')],
    ['another method than the caller read', 'getAccountInfo', call('getBalance', `["${KEY}"]`)],
    ['getProgramAccounts', 'getProgramAccounts', call('getProgramAccounts', `["${KEY}"]`)],
    ['no jsonrpc', 'getAccountInfo', `{"id":1,"method":"getAccountInfo","params":["${KEY}"]}`],
    ['jsonrpc 1.0', 'getAccountInfo', `{"jsonrpc":"1.0","id":1,"method":"getAccountInfo","params":["${KEY}"]}`],
    ['a notification', 'getAccountInfo', `{"jsonrpc":"2.0","method":"getAccountInfo","params":["${KEY}"]}`],
    ['an unknown member', 'getAccountInfo', `{"jsonrpc":"2.0","id":1,"method":"getAccountInfo","params":["${KEY}"],"x":1}`],
    ['a member twice', 'getAccountInfo', `{"jsonrpc":"2.0","id":1,"id":2,"method":"getAccountInfo","params":["${KEY}"]}`],
    ['an object id', 'getAccountInfo', call('getAccountInfo', `["${KEY}"]`, '{}')],
    ['a negative id', 'getAccountInfo', call('getAccountInfo', `["${KEY}"]`, '-1')],
    ['a fraction id', 'getAccountInfo', call('getAccountInfo', `["${KEY}"]`, '1.5')],
    ['an id past u64', 'getAccountInfo', call('getAccountInfo', `["${KEY}"]`, '18446744073709551616')],
    ['a lone surrogate id', 'getAccountInfo', call('getAccountInfo', `["${KEY}"]`, '"\\ud800"')],
    ['no params', 'getAccountInfo', '{"jsonrpc":"2.0","id":1,"method":"getAccountInfo"}'],
    ['empty params', 'getAccountInfo', call('getAccountInfo', '[]')],
    ['object params', 'getAccountInfo', call('getAccountInfo', `{"pubkey":"${KEY}"}`)],
    ['three params', 'getAccountInfo', call('getAccountInfo', `["${KEY}",{},1]`)],
    ['not base58', 'getAccountInfo', call('getAccountInfo', '["0OIl111111111111111111111111111111111111111"]')],
    ['31 bytes', 'getAccountInfo', call('getAccountInfo', '["1111111111111111111111111111111"]')],
    ['33 bytes', 'getAccountInfo', call('getAccountInfo', '["JEKNVnkbo3jma5nREBBJCDoXFVeKkD56V3xKrvRmWxFJ"]')],
    ['a number key', 'getAccountInfo', call('getAccountInfo', '[1]')],
    ['keys not a list', 'getMultipleAccounts', call('getMultipleAccounts', `["${KEY}"]`)],
    ['a bad key in the list', 'getMultipleAccounts', call('getMultipleAccounts', `[["${KEY}","x"]]`)],
    ['101 keys', 'getMultipleAccounts', call('getMultipleAccounts', `[${JSON.stringify(Array.from({ length: 101 }, () => KEY))}]`)],
    ['jsonParsed', 'getAccountInfo', call('getAccountInfo', `["${KEY}",{"encoding":"jsonParsed"}]`)],
    ['base64+zstd', 'getAccountInfo', call('getAccountInfo', `["${KEY}",{"encoding":"base64+zstd"}]`)],
    ['an unknown encoding', 'getAccountInfo', call('getAccountInfo', `["${KEY}",{"encoding":"hex"}]`)],
    ['a number encoding', 'getAccountInfo', call('getAccountInfo', `["${KEY}",{"encoding":1}]`)],
    ['getBalance takes no encoding', 'getBalance', call('getBalance', `["${KEY}",{"encoding":"base64"}]`)],
    ['getBalance takes no dataSlice', 'getBalance', call('getBalance', `["${KEY}",{"dataSlice":{"offset":0,"length":1}}]`)],
    ['a deprecated commitment', 'getAccountInfo', call('getAccountInfo', `["${KEY}",{"commitment":"max"}]`)],
    ['a misspelt commitment', 'getAccountInfo', call('getAccountInfo', `["${KEY}",{"commitment":"Finalized"}]`)],
    ['an inherited name as commitment', 'getAccountInfo', call('getAccountInfo', `["${KEY}",{"commitment":"toString"}]`)],
    ['an unknown option', 'getAccountInfo', call('getAccountInfo', `["${KEY}",{"encoding":"base64","changedSinceSlot":5}]`)],
    ['an option twice', 'getAccountInfo', call('getAccountInfo', `["${KEY}",{"encoding":"base64","encoding":"base58"}]`)],
    ['a list config', 'getAccountInfo', call('getAccountInfo', `["${KEY}",["base64"]]`)],
    ['a string config', 'getAccountInfo', call('getAccountInfo', `["${KEY}","base64"]`)],
    ['a negative slice', 'getAccountInfo', call('getAccountInfo', `["${KEY}",{"dataSlice":{"offset":-1,"length":1}}]`)],
    ['a fraction slice', 'getAccountInfo', call('getAccountInfo', `["${KEY}",{"dataSlice":{"offset":0.5,"length":1}}]`)],
    ['1.0 is no usize', 'getAccountInfo', call('getAccountInfo', `["${KEY}",{"dataSlice":{"offset":1.0,"length":1}}]`)],
    ['1e1 is no usize', 'getAccountInfo', call('getAccountInfo', `["${KEY}",{"dataSlice":{"offset":1e1,"length":1}}]`)],
    ['-0 is no usize', 'getAccountInfo', call('getAccountInfo', `["${KEY}",{"dataSlice":{"offset":-0,"length":1}}]`)],
    ['a slice without length', 'getAccountInfo', call('getAccountInfo', `["${KEY}",{"dataSlice":{"offset":0}}]`)],
    ['a slice with more', 'getAccountInfo', call('getAccountInfo', `["${KEY}",{"dataSlice":{"offset":0,"length":1,"x":2}}]`)],
    ['a string slice', 'getAccountInfo', call('getAccountInfo', `["${KEY}",{"dataSlice":{"offset":"0","length":1}}]`)],
    ['a list slice', 'getAccountInfo', call('getAccountInfo', `["${KEY}",{"dataSlice":[0,1]}]`)],
    ['a slice past 2^53', 'getAccountInfo', call('getAccountInfo', `["${KEY}",{"dataSlice":{"offset":9007199254740993,"length":1}}]`)],
    ['a negative minContextSlot', 'getAccountInfo', call('getAccountInfo', `["${KEY}",{"minContextSlot":-5}]`)],
    ['a string minContextSlot', 'getBalance', call('getBalance', `["${KEY}",{"minContextSlot":"5"}]`)],
    ['a fraction minContextSlot', 'getBalance', call('getBalance', `["${KEY}",{"minContextSlot":5.5}]`)],
  ];
  for (const [what, method, text] of refused) t.equal(read(text, method), null, what);
  const invalidUtf8 = Buffer.concat([
    Buffer.from('{"jsonrpc":"2.0","id":"'),
    Buffer.from([0xff]),
    Buffer.from(`","method":"getAccountInfo","params":["${KEY}"]}`),
  ]);
  t.equal(readAccountRequest(invalidUtf8, 'getAccountInfo'), null, 'invalid UTF-8');
});
