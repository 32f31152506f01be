// Each embedded WebAssembly module is the binary its .wat source in the repository assembles
// to: editing the source without `npm run gen:wasm` fails here.
import t from 'tap';
import { assembleWat, WASM_MODULES } from '../../../scripts/wasm-text.js';

const root = new URL('../../../../', import.meta.url);

t.test('embedded WebAssembly matches its source', async (t) => {
  t.ok(WASM_MODULES.length >= 2);
  for (const m of WASM_MODULES) {
    const wasm = await assembleWat(new URL(m.wat, root));
    const embedded = (await import(new URL('dist/' + m.ts.replace(/\.ts$/, '.js'), root).href)) as { WASM_BASE64: string };
    t.equal(embedded.WASM_BASE64, Buffer.from(wasm).toString('base64'), `${m.ts} is ${m.wat} assembled`);
  }
});

t.test('a module whose memory cannot grow says so instead of throwing', async (t) => {
  const { WasmModule } = await import('../../../src/rpc/wasm-module.js');
  const { WASM_BASE64 } = await import('../../../src/rpc/answer-scan-wasm.js');
  const mod = new WasmModule(WASM_BASE64, 1 << 20);
  const body = Buffer.from('abc');
  t.equal(mod.load(body, 1000), 24, 'within the first page: room after the bytes and 16 zero bytes, 8-aligned');
  t.same([...mod.bytes.subarray(0, 20)], [97, 98, 99, ...new Array<number>(17).fill(0)]);
  t.equal(mod.load(body, 2 << 20), -1, 'above the limit');
  (mod as unknown as { memory: { grow(pages: number): number } }).memory.grow = () => {
    throw new RangeError('WebAssembly.Memory.grow(): Maximum memory size exceeded');
  };
  t.equal(mod.load(body, 200_000), -1, 'the grow failed: the caller reads the bytes another way');
  t.equal(mod.bytes.length, 65536, 'the views are the ones it had');
});
