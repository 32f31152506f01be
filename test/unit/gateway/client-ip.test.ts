import t from 'tap';
import { ClientIpResolver, normalizeIp } from '../../../src/gateway/client-ip.js';

t.test('normalizeIp', async (t) => {
  t.equal(normalizeIp('0000:0000:0000:0000:0000:ffff:7f03:0405'), '127.3.4.5', 'uWS expanded IPv4-mapped');
  t.equal(normalizeIp('::ffff:10.1.2.3'), '10.1.2.3', 'dotted IPv4-mapped');
  t.equal(normalizeIp('::FFFF:0a01:0203'), '10.1.2.3', 'hex IPv4-mapped, upper case');
  t.equal(normalizeIp('0000:0000:0000:0000:0000:0000:0000:0001'), '::1', 'expanded IPv6 is compressed');
  t.equal(normalizeIp('2001:DB8:0:0:0:0:0:1'), '2001:db8::1');
  t.equal(normalizeIp(' 192.0.2.7 '), '192.0.2.7');
  t.equal(normalizeIp('[2001:db8::1]'), '2001:db8::1');
  t.equal(normalizeIp('192.0.2.7:5555'), '192.0.2.7', 'port stripped');
  t.equal(normalizeIp('not-an-ip'), '');
  t.equal(normalizeIp(''), '');
});

t.test('no trusted proxies: the peer is the client, X-Forwarded-For ignored', async (t) => {
  const r = new ClientIpResolver([]);
  t.equal(r.enabled, false);
  t.equal(r.resolve('0000:0000:0000:0000:0000:ffff:7f00:0001', '9.9.9.9'), '127.0.0.1');
});

t.test('trusted proxy: right-most untrusted hop', async (t) => {
  const r = new ClientIpResolver(['127.0.0.1/32', '10.0.0.0/8', '::1']);
  t.equal(r.resolve('127.0.0.1', '203.0.113.9'), '203.0.113.9');
  t.equal(r.resolve('127.0.0.1', '198.51.100.1, 203.0.113.9, 10.1.1.1'), '203.0.113.9', 'skips trusted hops from the right');
  t.equal(r.resolve('127.0.0.1', 'spoofed, 203.0.113.9'), '203.0.113.9', 'a client-written left part is never believed');
  t.equal(r.resolve('127.0.0.2', '203.0.113.9'), '127.0.0.2', 'untrusted peer: its header is ignored');
  t.equal(r.resolve('0000:0000:0000:0000:0000:0000:0000:0001', '::ffff:203.0.113.9'), '203.0.113.9', 'IPv6 proxy, mapped hop');
  t.equal(r.resolve('127.0.0.1', '10.0.0.1, 10.0.0.2'), '10.0.0.1', 'all hops trusted: left-most');
  t.equal(r.resolve('127.0.0.1', ''), '127.0.0.1', 'no header: the proxy itself');
  t.equal(r.resolve('127.0.0.1', '203.0.113.9, garbage'), '127.0.0.1', 'a malformed hop stops the walk at the peer');
});
