// A WebAssembly module embedded as base64 (`npm run gen:wasm`) with its memory, as the byte
// scanners use it (answer-scan.ts, request-scan.ts): the bytes to read are copied to offset 0
// and what the module writes follows them; the memory grows to what a call needs, up to a
// limit, and never shrinks.

const PAGE = 65536;
/** Zero bytes after the copied bytes: a 16-byte load at the last byte reads them. */
const SLACK = 16;

export class WasmModule {
  readonly exports: WebAssembly.Exports;
  private readonly memory: WebAssembly.Memory;
  /** Views of the whole memory; new ones when it grows. */
  bytes: Uint8Array;
  words: Int32Array;

  constructor(
    base64: string,
    /** Memory it may grow to. */
    private readonly maxBytes: number,
  ) {
    this.exports = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(base64, 'base64'))).exports;
    this.memory = this.exports.memory as WebAssembly.Memory;
    this.bytes = new Uint8Array(this.memory.buffer);
    this.words = new Int32Array(this.memory.buffer);
  }

  /**
   * Copies `buf` to offset 0 with SLACK zero bytes after it and makes room for `extra` bytes
   * after those: returns where that room starts (8-aligned), or -1 when it does not fit.
   */
  load(buf: Uint8Array, extra: number): number {
    const n = buf.length;
    const at = (n + SLACK + 7) & ~7;
    if (!this.fit(at + extra)) return -1;
    this.bytes.set(buf, 0);
    this.bytes.fill(0, n, n + SLACK);
    return at;
  }

  /** Whether `need` bytes of memory are there, grown to if need be; false above the limit or when it cannot grow. */
  private fit(need: number): boolean {
    if (need <= this.bytes.length) return true;
    if (need > this.maxBytes) return false;
    try {
      this.memory.grow(Math.ceil((need - this.bytes.length) / PAGE));
    } catch {
      return false; // out of memory: the JavaScript scanners read it instead
    }
    this.bytes = new Uint8Array(this.memory.buffer);
    this.words = new Int32Array(this.memory.buffer);
    return true;
  }
}
