// The shape of the big answers test/helpers/big-answer-node.ts writes, for tests to check what
// arrived byte for byte.

/** The first bytes of a big answer to the call with id `id` (its JSON text). */
export function bigAnswerHead(id: string): string {
  return `{"jsonrpc":"2.0","id":${id},"result":"`;
}

/** Byte `i` of the filler between the head and the closing `"}`: a repeating pattern a cut or reorder would show. */
export function fillerByte(i: number): number {
  return 0x61 + (i % 26);
}
