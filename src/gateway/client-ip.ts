// The client's public IP for IP affinity and per-IP limits (docs/routing.md "Affinity and rate limits"): the socket peer, or,
// when the peer is a trusted proxy, the right-most X-Forwarded-For hop that is not trusted.
// IPv4-mapped IPv6 (uWS reports every peer of a dual-stack listener that way) becomes IPv4.

import { BlockList, isIP } from 'node:net';

const MAPPED_EXPANDED = '0000:0000:0000:0000:0000:ffff:';

/** Canonical text of an address, or '' when it is not one. */
export function normalizeIp(text: string): string {
  let ip = text.trim();
  if (ip.startsWith(MAPPED_EXPANDED) && ip.length === MAPPED_EXPANDED.length + 9) {
    const hi = Number.parseInt(ip.slice(30, 34), 16);
    const lo = Number.parseInt(ip.slice(35, 39), 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  if (ip.startsWith('[')) ip = ip.slice(1, ip.indexOf(']') < 0 ? undefined : ip.indexOf(']'));
  const family = isIP(ip);
  if (family === 4) return ip;
  if (family !== 6) {
    // "1.2.3.4:5678" as some proxies write it.
    const colon = ip.lastIndexOf(':');
    return colon > 0 && isIP(ip.slice(0, colon)) === 4 ? ip.slice(0, colon) : '';
  }
  // The WHATWG URL parser prints IPv6 in its canonical compressed form.
  const canonical = new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  const m = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (m === null) return canonical;
  const hi = Number.parseInt(m[1]!, 16);
  const lo = Number.parseInt(m[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

export class ClientIpResolver {
  private readonly trusted = new BlockList();
  /** False when no proxy is trusted: the peer is always the client. */
  readonly enabled: boolean;

  constructor(cidrs: readonly string[]) {
    for (const c of cidrs) {
      const [addr, prefix] = c.split('/');
      const ip = normalizeIp(addr!);
      const family = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
      if (prefix === undefined) this.trusted.addAddress(ip, family);
      else this.trusted.addSubnet(ip, Number(prefix), family);
    }
    this.enabled = cidrs.length > 0;
  }

  isTrusted(ip: string): boolean {
    return ip !== '' && this.trusted.check(ip, isIP(ip) === 6 ? 'ipv6' : 'ipv4');
  }

  /** `peer` as uWS reports it; `xff` the X-Forwarded-For header ('' when absent). */
  resolve(peer: string, xff: string): string {
    const ip = normalizeIp(peer);
    if (!this.enabled || xff === '' || !this.isTrusted(ip)) return ip;
    const hops = xff.split(',');
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = normalizeIp(hops[i]!);
      if (hop === '') return ip; // a malformed hop: trust nothing beyond the peer
      if (!this.isTrusted(hop)) return hop;
    }
    // Every hop is a trusted proxy: the left-most is the closest thing to a client.
    return normalizeIp(hops[0]!) || ip;
  }
}
