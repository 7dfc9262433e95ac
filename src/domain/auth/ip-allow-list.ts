import { BlockList, isIP } from 'node:net';
import { badInput } from '../errors.js';

/** The most CIDRs one key may list: an allow-list names a few servers, not the internet. */
export const MAX_ALLOWED_CIDRS = 50;

/**
 * The addresses a key may be used from: CIDRs or single addresses, IPv4 and IPv6, matched with
 * node's BlockList. An IPv4 client seen on a dual-stack socket (`::ffff:203.0.113.7`) matches its
 * IPv4 entries.
 */
export class IpAllowList {
  private readonly list = new BlockList();

  constructor(readonly cidrs: readonly string[]) {
    for (const cidr of cidrs) {
      const [address, prefix] = cidr.split('/') as [string, string];
      const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      this.list.addSubnet(address, Number(prefix), family);
    }
  }

  admits(clientIp: string): boolean {
    const ip = unmapped(clientIp);
    const family = isIP(ip);
    if (family === 0) return false;
    return this.list.check(ip, family === 6 ? 'ipv6' : 'ipv4');
  }
}

function unmapped(ip: string): string {
  const match = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return match ? match[1]! : ip;
}

/**
 * Parses what a person typed (comma, space or newline separated) into normalised CIDRs: a bare
 * address gets /32 or /128. Refuses anything else, naming the entry, so a typo cannot silently
 * lock a key out or let everyone in.
 */
export function parseAllowList(text: string, field = 'ipAllowList'): string[] {
  const entries = text
    .split(/[\s,]+/)
    .map((e) => e.trim())
    .filter(Boolean);
  if (entries.length > MAX_ALLOWED_CIDRS)
    throw badInput(field, `${field} may list at most ${MAX_ALLOWED_CIDRS} entries.`);
  const cidrs = entries.map((entry) => {
    const [address = '', prefix, extra] = entry.split('/');
    const family = isIP(address);
    const max = family === 6 ? 128 : 32;
    const bits = prefix === undefined ? max : /^\d{1,3}$/.test(prefix) ? Number(prefix) : Number.NaN;
    const refused = () =>
      badInput(field, `${field}: ${JSON.stringify(entry.slice(0, 64))} is not an IPv4 or IPv6 address or CIDR.`);
    // A zone id (fe80::1%eth0) names an interface on our side; matching ignores it, so it would be
    // kept, of any length, and promise a restriction that is not there.
    if (family === 0 || address.includes('%') || extra !== undefined || !(bits >= 0 && bits <= max)) throw refused();
    // An IPv4-mapped entry names IPv4 addresses: stored as IPv4 so it reads as what it admits. A
    // mapped prefix under /96 would reach past ::ffff:0:0/96 and cover every IPv4 client.
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) {
      if (bits < 96) throw refused();
      return `${mapped[1]}/${bits - 96}`;
    }
    return `${address.toLowerCase()}/${bits}`;
  });
  return [...new Set(cidrs)];
}
