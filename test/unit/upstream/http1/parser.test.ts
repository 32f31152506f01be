// The HTTP/1.1 response parser alone, fed bytes as a socket would deliver them: framing
// (content-length, chunked, close-delimited, no-body statuses), reads split anywhere, the
// reused read buffer, and malformed streams.

import t from 'tap';
import { ProtocolError, ResponseParser, type AnswerSink } from '../../../../src/upstream/http1/parser.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];
type Answer = [status: number, close: boolean, body: string];

/** Stands in for a connection with `unanswered` requests waiting. */
class Answers implements AnswerSink {
  closed = false;
  /** Bodies as handed over, read only at the end: a view of the read buffer would be garbled by then. */
  private readonly bodies: [number, boolean, Buffer][] = [];

  /** A streamed answer: [status, length] when it began, then its bytes (copied: they are views of the read). */
  readonly streamed: { status: number; length: number; parts: Buffer[] }[] = [];

  constructor(
    public unanswered = 1,
    /** Close after this many answers (as a connection does on `connection: close`). */
    private readonly closeAfter = Infinity,
    /** Answers over this stream (AnswerSink.bufferLimit); `refuse`: the sink gives up on them instead. */
    readonly bufferLimit = Infinity,
    private readonly refuse = false,
  ) {}

  streamFrom(status: number, length: number, first: Buffer): boolean {
    if (this.refuse) {
      this.closed = true;
      return false;
    }
    this.streamed.push({ status, length, parts: first.length > 0 ? [Buffer.from(first)] : [] });
    return true;
  }

  streamData(chunk: Buffer): void {
    this.streamed[this.streamed.length - 1]!.parts.push(Buffer.from(chunk));
  }

  get got(): Answer[] {
    return this.bodies.map(([status, close, body]) => [status, close, body.toString('latin1')]);
  }

  answer(status: number, close: boolean, body: Buffer | null): void {
    this.bodies.push([status, close, body ?? Buffer.concat(this.streamed[this.streamed.length - 1]!.parts)]);
    this.unanswered--;
    if (this.bodies.length >= this.closeAfter) this.closed = true;
  }
}

// Reads land in one buffer that the next read overwrites, as with the client's shared read
// buffer: an answer that kept a view of it would come out garbled.
const READ = Buffer.alloc(256 * 1024);

/** Feeds `reads` one after another through the reused read buffer. */
function feed(p: ResponseParser, sink: AnswerSink, reads: string[]): void {
  for (const r of reads) {
    const n = READ.write(r, 0, 'latin1');
    p.feed(READ.subarray(0, n), sink);
    READ.fill(0x58); // 'X'
  }
}

/** Parses `text` in one read. */
function parse(text: string, unanswered = 1): Answer[] {
  const sink = new Answers(unanswered);
  feed(new ResponseParser(), sink, [text]);
  return sink.got;
}

/** Parses `text` split at every position into two reads, and into one read per byte. */
function everySplit(t: Test, text: string, unanswered: number, want: Answer[]): void {
  const wrong: number[] = [];
  for (let i = 1; i < text.length; i++) {
    const sink = new Answers(unanswered);
    feed(new ResponseParser(), sink, [text.slice(0, i), text.slice(i)]);
    if (JSON.stringify(sink.got) !== JSON.stringify(want)) wrong.push(i);
  }
  t.same(wrong, [], 'split into two reads at any position');
  const sink = new Answers(unanswered);
  feed(new ResponseParser(), sink, [...text]);
  t.same(sink.got, want, 'one byte per read');
}

/** The ProtocolError message parsing `reads` throws ('' when it throws none). */
function protocolError(reads: string[], unanswered = 1): string {
  try {
    feed(new ResponseParser(), new Answers(unanswered), reads);
    return '';
  } catch (err) {
    if (err instanceof ProtocolError) return err.message;
    throw err;
  }
}

const LENGTH = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nContent-Length: 11\r\n\r\n{"id":1234}';
const CHUNKED = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1;q="a b"\r\n{"a":\r\n3\r\n12}\r\n0\r\nx-trailer: 1\r\nx-other: 2\r\n\r\n';

t.test('content-length: in one read, and split across reads', async (t) => {
  t.same(parse(LENGTH), [[200, false, '{"id":1234}']]);
  everySplit(t, LENGTH, 1, [[200, false, '{"id":1234}']]);
  t.same(parse('HTTP/1.1 503 Service Unavailable\r\nCONTENT-LENGTH: 4\r\n\r\nbusy'), [[503, false, 'busy']], 'header names in any case');
  t.same(parse('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'), [[200, false, '']], 'empty body');
});

t.test('a large body spanning many reads arrives whole', async (t) => {
  const body = 'x'.repeat(200_000) + 'end';
  const text = `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
  const reads: string[] = [];
  for (let i = 0; i < text.length; i += 65_536) reads.push(text.slice(i, i + 65_536));
  const sink = new Answers();
  feed(new ResponseParser(), sink, reads);
  t.equal(sink.got.length, 1);
  t.equal(sink.got[0]![2], body);
});

t.test('several answers in one read, in order', async (t) => {
  const stream =
    LENGTH + 'HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\n{}' + CHUNKED + 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n';
  const want: Answer[] = [
    [200, false, '{"id":1234}'],
    [201, false, '{}'],
    [200, false, '{"a":12}'],
    [200, false, 'ok'],
  ];
  t.same(parse(stream, 4), want);
  everySplit(t, stream, 4, want);
});

t.test('chunked with extensions and trailers; the chunk size line split across reads', async (t) => {
  t.same(parse(CHUNKED), [[200, false, '{"a":12}']]);
  everySplit(t, CHUNKED, 1, [[200, false, '{"a":12}']]);
  const sizeLine = CHUNKED.indexOf('5;ext');
  const sink = new Answers();
  feed(new ResponseParser(), sink, [CHUNKED.slice(0, sizeLine + 3), CHUNKED.slice(sizeLine + 3, sizeLine + 9), CHUNKED.slice(sizeLine + 9)]);
  t.same(sink.got, [[200, false, '{"a":12}']], 'size line in three reads');
  t.same(parse('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n'), [[200, false, '0123456789']], 'hex sizes, no trailer');
  t.same(parse('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n'), [[200, false, '']], 'no chunks');
});

t.test('204, 304 and 1xx have no body', async (t) => {
  const next = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}';
  t.same(parse('HTTP/1.1 204 No Content\r\n\r\n' + next, 2), [
    [204, false, ''],
    [200, false, '{}'],
  ]);
  t.same(parse('HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n' + next, 2), [
    [304, false, ''],
    [200, false, '{}'],
  ]);
  const informational = 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n' + next;
  t.same(parse(informational), [[200, false, '{}']], '1xx answers are skipped: the final one answers the request');
  everySplit(t, informational, 1, [[200, false, '{}']]);
});

t.test('close: HTTP/1.0, `connection: close`, keep-alive', async (t) => {
  t.same(parse('HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}'), [[200, true, '{}']], 'HTTP/1.0 closes');
  t.same(parse('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n{}'), [[200, false, '{}']], 'unless it says keep-alive');
  t.same(parse('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}'), [[200, true, '{}']], '`connection: close`');
  t.same(parse('HTTP/1.1 204 No Content\r\nconnection: Close\r\n\r\n'), [[204, true, '']], 'also without a body');
  const sink = new Answers(2, 1);
  feed(new ResponseParser(), sink, ['HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}' + LENGTH]);
  t.same(sink.got, [[200, true, '{}']], 'nothing is parsed once the sink closed');
});

t.test('a body delimited by the connection end', async (t) => {
  const p = new ResponseParser();
  const sink = new Answers();
  feed(p, sink, ['HTTP/1.0 200 OK\r\n\r\n{"until":', '"close"}']);
  t.same(sink.got, [], 'not whole while the connection is open');
  t.equal(p.untilClose, true);
  p.endOfStream(sink);
  t.same(sink.got, [[200, true, '{"until":"close"}']]);
  t.equal(p.untilClose, false, 'reset after the answer');
  const empty = new ResponseParser();
  const s2 = new Answers();
  feed(empty, s2, ['HTTP/1.1 200 OK\r\n\r\n']);
  t.equal(empty.untilClose, true, 'HTTP/1.1 without content-length or chunked');
  empty.endOfStream(s2);
  t.same(s2.got, [[200, true, '']]);
});

t.test('malformed streams throw ProtocolError', async (t) => {
  t.equal(protocolError(['SMTP ready\r\n\r\n']), 'not an HTTP/1.x response');
  t.equal(protocolError(['HTTP/1.1 abc OK\r\n\r\n']), 'bad status line');
  t.equal(protocolError(['HTTP/1.1 42 OK\r\n\r\n']), 'bad status line');
  t.equal(protocolError(['HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n']), 'bad content-length');
  t.equal(protocolError(['HTTP/1.1 200 OK\r\nContent-Length: 12x\r\n\r\n']), 'bad content-length');
  t.equal(protocolError(['HTTP/1.1 200 OK\r\nContent-Length: 1.5\r\n\r\n']), 'bad content-length');
  t.equal(protocolError(['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n']), 'bad chunk size');
  t.equal(protocolError(['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n' + '1'.repeat(1100)]), 'chunk size line too long');
  t.equal(protocolError([LENGTH], 0), 'answer without a request');
  const big = 'HTTP/1.1 200 OK\r\nx-pad: ' + 'a'.repeat(70_000);
  t.equal(protocolError([big]), 'response head too large', 'in one read');
  t.equal(protocolError([big.slice(0, 40_000), big.slice(40_000)]), 'response head too large', 'accumulated over reads');
  t.equal(protocolError(['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nx-pad: ' + 'a'.repeat(70_000)]), 'trailer too large');
  t.equal(protocolError(['HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}']), '', 'and a good one does not');
});

t.test("answers over the sink's limit stream: content-length at once, chunked and close-delimited once they outgrow it", async (t) => {
  const body = 'x'.repeat(100);
  for (const [what, text, length] of [
    ['content-length', `HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n${body}`, 100],
    ['chunked', `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n28\r\n${body.slice(0, 40)}\r\n3c\r\n${body.slice(40)}\r\n0\r\n\r\n`, -1],
    ['close-delimited', `HTTP/1.1 200 OK\r\n\r\n${body}`, -1],
  ] as const) {
    for (const cut of [1, 7, 33]) {
      const sink = new Answers(1, Infinity, 30);
      const p = new ResponseParser();
      const reads: string[] = [];
      for (let i = 0; i < text.length; i += cut) reads.push(text.slice(i, i + cut));
      feed(p, sink, reads);
      if (what === 'close-delimited') p.endOfStream(sink);
      t.equal(sink.streamed.length, 1, `${what}, reads of ${cut}: streamed`);
      t.equal(sink.streamed[0]!.length, length, `${what}: the length known at the start`);
      t.same(sink.got, [[200, what === 'close-delimited', body]], `${what}, reads of ${cut}: every byte, in order`);
    }
  }
  const small = new Answers(1, Infinity, 1000);
  feed(new ResponseParser(), small, [`HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n${body}`]);
  t.equal(small.streamed.length, 0, 'an answer within the limit is collected');
  const refusing = new Answers(2, Infinity, 30, true);
  feed(new ResponseParser(), refusing, [`HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n${body}HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}`]);
  t.same(refusing.got, [], 'a sink that gives up: nothing more is parsed');
});
