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
 * lock a key out or let everyone in; and refuses a list too broad to restrict (checkBreadth).
 */
export function parseAllowList(text: string, field = 'ipAllowList'): string[] {
  const { cidrs, typed } = readAllowList(text, field);
  checkBreadth(cidrs, field, typed);
  return cidrs;
}

/**
 * A typed list over the stored one: the stored list as it is when the typed one holds the same
 * entries (a form re-sending a list saved before today's bounds must not block the key's other
 * controls; the list stays the operator's to fix), else the typed list, parsed and checked.
 */
export function parseAllowListOver(text: string, stored: readonly string[], field = 'ipAllowList'): string[] {
  const { cidrs, typed } = readAllowList(text, field);
  if (sameAllowList(cidrs, stored)) return [...stored];
  checkBreadth(cidrs, field, typed);
  return cidrs;
}

/** Whether two normalised lists hold the same entries, in any order. */
export function sameAllowList(a: readonly string[], b: readonly string[]): boolean {
  const left = new Set(a);
  const right = new Set(b);
  return left.size === right.size && [...left].every((cidr) => right.has(cidr));
}

/** The entries as normalised CIDRs (no duplicates), each with the text typed for it; only the format is checked. */
function readAllowList(text: string, field: string): { cidrs: string[]; typed: Map<string, string> } {
  const entries = text
    .split(/[\s,]+/)
    .map((e) => e.trim())
    .filter(Boolean);
  if (entries.length > MAX_ALLOWED_CIDRS)
    throw badInput(field, `${field} may list at most ${MAX_ALLOWED_CIDRS} entries.`);
  const typed = new Map<string, string>();
  for (const entry of entries) {
    const [address = '', prefix, extra] = entry.split('/');
    const family = isIP(address);
    const max = family === 6 ? 128 : 32;
    const bits = prefix === undefined ? max : /^\d{1,3}$/.test(prefix) ? Number(prefix) : Number.NaN;
    const refused = () => badInput(field, `${field}: ${shown(entry)} is not an IPv4 or IPv6 address or CIDR.`);
    // A zone id (fe80::1%eth0) names an interface on our side; matching ignores it, so it would be
    // kept, of any length, and promise a restriction that is not there.
    if (family === 0 || address.includes('%') || extra !== undefined || !(bits >= 0 && bits <= max)) throw refused();
    // An IPv4-mapped entry names IPv4 addresses: stored as IPv4 so it reads as what it admits. A
    // mapped prefix under /96 would reach past ::ffff:0:0/96 and cover every IPv4 client.
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped && bits < 96) throw refused();
    const cidr = mapped ? `${mapped[1]}/${bits - 96}` : `${address.toLowerCase()}/${bits}`;
    if (!typed.has(cidr)) typed.set(cidr, entry);
  }
  return { cidrs: [...typed.keys()], typed };
}

const shown = (entry: string) => JSON.stringify(entry.slice(0, 64));

/**
 * The widest entries a list may hold: an IPv4 /8 (16.7 million addresses) and an IPv6 /32 (a
 * whole provider's allocation). Anything broader (0.0.0.0/1, 10.0.0.0/2, 2000::/3) reads as a
 * restriction and admits a large part of the internet. An IPv4-mapped IPv6 entry is judged as IPv4.
 */
export const WIDEST_IPV4_PREFIX = 8;
export const WIDEST_IPV6_PREFIX = 32;

/**
 * Refuses a list that admits every address of a family (refuseAllowingEveryone) or holds an entry
 * broader than the widest allowed, naming the field, the entry (as typed, when `typed` knows it)
 * and the bound. Takes normalised CIDRs.
 */
export function checkBreadth(cidrs: readonly string[], field = 'ipAllowList', typed?: ReadonlyMap<string, string>) {
  refuseAllowingEveryone(cidrs, field);
  for (const cidr of cidrs) {
    const bound = boundBroken(cidr);
    if (bound) throw badInput(field, `${field}: ${shown(typed?.get(cidr) ?? cidr)} is too broad: ${bound}.`);
  }
}

/** What is wrong with a stored list by today's rules (checkBreadth), or undefined when nothing is. */
export function allowListProblem(cidrs: readonly string[]): string | undefined {
  try {
    checkBreadth(cidrs);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** The bound a normalised CIDR breaks, in words, or undefined when it keeps within it. */
function boundBroken(cidr: string): string | undefined {
  const [address, prefix] = cidr.split('/') as [string, string];
  const bits = Number(prefix);
  if (isIP(address) === 4)
    return bits < WIDEST_IPV4_PREFIX ? `IPv4 entries may be /${WIDEST_IPV4_PREFIX} or narrower` : undefined;
  const [from, to] = rangeOf(ipv6ToBigInt(address), V6_BITS, BigInt(bits));
  if (from >= MAPPED_START && to <= MAPPED_END)
    return bits - 96 < WIDEST_IPV4_PREFIX
      ? `IPv4-mapped entries are judged as IPv4 and may be /${WIDEST_IPV4_PREFIX} (::ffff:0:0/${96 + WIDEST_IPV4_PREFIX}) or narrower`
      : undefined;
  if (from >= TEREDO_START && to <= TEREDO_END)
    return bits < 128 ? 'Teredo entries (2001::/32) tunnel any IPv4 host and may only be single addresses' : undefined;
  return bits < WIDEST_IPV6_PREFIX ? `IPv6 entries may be /${WIDEST_IPV6_PREFIX} or narrower` : undefined;
}

/**
 * Teredo (2001::/32, RFC 4380) gives any IPv4 host behind a NAT an address in this /32: the whole
 * prefix, or one relay server's /64, admits the IPv4 internet while reading as one network.
 */
const TEREDO_START = 0x2001n << 112n;
const TEREDO_END = TEREDO_START + (1n << 96n) - 1n;

const V4_BITS = 32n;
const V6_BITS = 128n;
/** Where IPv4 clients sit in IPv6 (::ffff:0:0/96): the list matches them against IPv6 entries there too. */
const MAPPED_START = 0xffffn << 32n;
const MAPPED_END = MAPPED_START + (1n << V4_BITS) - 1n;

/**
 * Refuses a list that admits every IPv4 or every IPv6 address (0.0.0.0/0, ::/0, ::ffff:0.0.0.0/96,
 * ::/64, or halves such as 0.0.0.0/1 with 128.0.0.0/1): it reads as a restriction and is none.
 * Takes normalised CIDRs (as `parseAllowList` returns and the database keeps).
 */
export function refuseAllowingEveryone(cidrs: readonly string[], field = 'ipAllowList'): void {
  const v4: Range[] = [];
  const v6: Range[] = [];
  for (const cidr of cidrs) {
    const [address, prefix] = cidr.split('/') as [string, string];
    if (isIP(address) === 4) {
      const range = rangeOf(ipv4ToBigInt(address), V4_BITS, BigInt(prefix));
      v4.push(range);
      v6.push([range[0] + MAPPED_START, range[1] + MAPPED_START]);
    } else {
      const range = rangeOf(ipv6ToBigInt(address), V6_BITS, BigInt(prefix));
      v6.push(range);
      // The part of the entry inside ::ffff:0:0/96, as IPv4.
      const from = range[0] > MAPPED_START ? range[0] : MAPPED_START;
      const to = range[1] < MAPPED_END ? range[1] : MAPPED_END;
      if (from <= to) v4.push([from - MAPPED_START, to - MAPPED_START]);
    }
  }
  const family = covers(v6, V6_BITS) ? 'IPv6 and IPv4' : covers(v4, V4_BITS) ? 'IPv4' : undefined;
  if (family)
    throw badInput(
      field,
      `${field}: ${cidrs.length === 1 ? JSON.stringify(cidrs[0]) : 'these entries'} allow every ${family} address, which restricts nothing; an empty list already allows every address.`,
    );
}

type Range = [bigint, bigint];

function rangeOf(address: bigint, width: bigint, prefix: bigint): Range {
  const size = 1n << (width - prefix);
  const start = address - (address % size);
  return [start, start + size - 1n];
}

/** Whether the ranges together cover 0 … 2^width − 1. */
function covers(ranges: Range[], width: bigint): boolean {
  let next = 0n;
  for (const [from, to] of [...ranges].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
    if (from > next) return false;
    if (to + 1n > next) next = to + 1n;
  }
  return next >= 1n << width;
}

function ipv4ToBigInt(address: string): bigint {
  return address.split('.').reduce((n, part) => (n << 8n) + BigInt(part), 0n);
}

/** An address `isIP` accepted as IPv6 (with `::` and perhaps a dotted IPv4 tail) as a 128-bit number. */
function ipv6ToBigInt(address: string): bigint {
  let text = address;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = ipv4ToBigInt(dotted[1]!);
    text = `${text.slice(0, -dotted[1]!.length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const groups = (part: string) => (part ? part.split(':') : []);
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return all.reduce((n, group) => (n << 16n) + BigInt(`0x${group}`), 0n);
}
