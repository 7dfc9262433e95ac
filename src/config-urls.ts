import { FormatRegistry } from '@sinclair/typebox';

/**
 * The kinds of URL the configuration holds, each a TypeBox string format checked by parsing the
 * value as a URL (WHATWG, as `fetch`, node-postgres and ioredis read it) with one of its schemes.
 * A pattern such as `^https?://` let `https://` or `http://exa mple` through, to fail at the first
 * request; TypeBox knows no formats of its own (`format: 'uri'` stopped every start).
 */
const KINDS = {
  'http-url': { schemes: ['http:', 'https:'], needsHost: true, expected: 'a URL with scheme http or https and a host' },
  'postgres-url': {
    schemes: ['postgres:', 'postgresql:'],
    // No host: libpq's defaults (a Unix socket, or `?host=/var/run/postgresql`).
    needsHost: false,
    expected: 'a PostgreSQL URL (scheme postgres or postgresql, hosts comma-separated)',
  },
  'redis-url': {
    schemes: ['redis:', 'rediss:'],
    needsHost: true,
    expected: 'a URL with scheme redis or rediss and a host',
  },
  'smtp-url': { schemes: ['smtp:', 'smtps:'], needsHost: true, expected: 'a URL with scheme smtp or smtps and a host' },
} as const;

export type UrlKind = keyof typeof KINDS;

/** What a variable of this kind must be, said without its value (config errors never echo one). */
export const expectedUrl = (kind: UrlKind): string => KINDS[kind].expected;

/**
 * A libpq URL may list several hosts (`postgres://u@h1:5432,h2:5433/db`, see db/multi-host.ts),
 * which no URL parser reads: each host is checked in a one-host copy of the URL.
 */
function oneHostUrls(value: string): string[] {
  const match = /^([a-z]+:\/\/)([^@/?#]*@)?([^/?#]*)(.*)$/i.exec(value);
  if (!match) return [value];
  const [, scheme, userInfo = '', hosts = '', rest = ''] = match;
  return hosts.split(',').map((host) => `${scheme}${userInfo}${host}${rest}`);
}

export function isUrlOfKind(kind: UrlKind, value: string): boolean {
  const { schemes, needsHost } = KINDS[kind];
  // `https:host` parses too (special schemes forgive a missing `//`), and `postgres:db` as a path.
  if (!/^[a-z]+:\/\//i.test(value)) return false;
  const urls = kind === 'postgres-url' ? oneHostUrls(value) : [value];
  return urls.every((text) => {
    if (!URL.canParse(text)) return false;
    const url = new URL(text);
    return (schemes as readonly string[]).includes(url.protocol) && (!needsHost || url.hostname !== '');
  });
}

for (const kind of Object.keys(KINDS) as UrlKind[]) {
  FormatRegistry.Set(kind, (value) => isUrlOfKind(kind, value));
}
