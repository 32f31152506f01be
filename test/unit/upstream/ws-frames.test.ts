// Rewriting a node's notification for each client: the bytes NotificationFrames hands out
// must equal the node's frame with the client's id in place of the node's, whatever the
// frame's size, shape and characters, even though one buffer is reused for every client.

import t from 'tap';
import { NotificationFrames, notificationSpans } from '../../../src/upstream/ws/frames.js';

/** What each client must get, built the obvious way. */
function expected(frame: string, upstreamId: string, id: string): string {
  const at = frame.indexOf(`"subscription":${upstreamId}`) + '"subscription":'.length;
  return frame.slice(0, at) + id + frame.slice(at + upstreamId.length);
}

function fanOut(frames: NotificationFrames, text: string, ids: string[]): string[] {
  const frame = Buffer.from(text);
  const spans = notificationSpans(frame)!;
  frames.begin(frame, spans.idStart, spans.idEnd);
  // Copied at once: the buffer is the next client's as soon as for() is called again.
  const out = ids.map((id) => frames.for(id).toString());
  frames.end();
  return out;
}

const IDS = ['0', '7', '42', '12345', '9007199254740991', '"0x0"', '"0x1f"', '"0x1fffffffffffff"', '3'];

t.test('slot notification: every client gets the node frame with its own id', async (t) => {
  const text = '{"jsonrpc":"2.0","method":"slotNotification","params":{"result":{"parent":99,"root":67,"slot":100},"subscription":5123}}';
  t.equal(notificationSpans(Buffer.from(text))!.upstreamId, '5123');
  const frames = new NotificationFrames();
  t.same(
    fanOut(frames, text, IDS),
    IDS.map((id) => expected(text, '5123', id)),
  );
});

t.test('multi-byte characters around the id, the id first with a large tail, frames over the kept buffer', async (t) => {
  const frames = new NotificationFrames();
  const shapes = [
    `{"jsonrpc":"2.0","method":"logsNotification","params":{"result":{"logs":["héllo ✓ 🚀"]},"subscription":77}}`,
    `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0xabc","result":{"extra":"${'é'.repeat(3000)}"}}}`,
    `{"jsonrpc":"2.0","method":"accountNotification","params":{"result":{"data":"${'A'.repeat(40_000)}"},"subscription":1}}`,
    `{"jsonrpc":"2.0","method":"slotNotification","params":{"result":{"slot":1},"subscription":2}}`,
  ];
  for (const text of shapes) {
    const up = notificationSpans(Buffer.from(text))!.upstreamId;
    t.same(
      fanOut(frames, text, IDS),
      IDS.map((id) => expected(text, up, id)),
      `${text.slice(0, 60)}… (${Buffer.byteLength(text)} bytes)`,
    );
  }
});

t.test('an id longer than the room made for it still fits', async (t) => {
  // Over the kept buffer, so the frame gets a buffer of its own sized for ordinary ids.
  const text = `{"jsonrpc":"2.0","method":"accountNotification","params":{"result":{"data":"${'B'.repeat(20_000)}"},"subscription":1}}`;
  const ids = ['1', `"${'f'.repeat(100)}"`, '22'];
  t.same(
    fanOut(new NotificationFrames(), text, ids),
    ids.map((id) => expected(text, '1', id)),
  );
});
