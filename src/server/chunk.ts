// Body chunks and WebSocket messages as either engine hands them (types.ts BodyChunk): views
// and copies without a second copy for Node's Uint8Arrays.

import type { BodyChunk } from './types.js';

/** The bytes, not copied: valid only as long as the chunk is. */
export function viewOf(chunk: BodyChunk): Uint8Array {
  return chunk instanceof Uint8Array ? chunk : new Uint8Array(chunk);
}

/** A copy the caller owns (uWS reuses its memory once the callback returns). */
export function copyOf(chunk: BodyChunk): Buffer {
  return Buffer.from(viewOf(chunk));
}
