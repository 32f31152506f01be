// Address ranges in the config (trustedProxies): checked by the schema, nothing imported from config/.

import { isIP } from 'node:net';

/** An IPv4/IPv6 address, optionally with a /prefix (a bare address means /32 or /128). */
export function isCidr(s: string): boolean {
  const slash = s.indexOf('/');
  const addr = slash === -1 ? s : s.slice(0, slash);
  const family = isIP(addr);
  if (family === 0) return false;
  if (slash === -1) return true;
  const prefix = s.slice(slash + 1);
  if (!/^(0|[1-9][0-9]{0,2})$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}
