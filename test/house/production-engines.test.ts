import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

/**
 * Every package a production install holds (`npm ci --omit=dev`, as the image installs them)
 * accepts the Node this runs on and the oldest one package.json promises (engines node >=20.19).
 * A package that asks for a newer Node may work today and break on any patch release of it: it
 * is pinned or overridden instead (see docs/development.md). Read from package-lock.json, which
 * is what `npm ci` installs, with each package's own `engines`.
 */

const ROOT = join(import.meta.dirname, '..', '..');

interface LockEntry {
  version?: string;
  dev?: boolean;
  devOptional?: boolean;
  optional?: boolean;
  os?: string[];
  cpu?: string[];
  engines?: { node?: string } | string[];
}

interface Lockfile {
  packages: Record<string, LockEntry>;
}

/** An `os` or `cpu` list as npm reads it: names, or `!name` for all but that one. */
function fits(list: string[] | undefined, actual: string): boolean {
  if (!list?.length) return true;
  if (list.includes(`!${actual}`)) return false;
  return list.includes(actual) || list.every((entry) => entry.startsWith('!'));
}

/** The packages `npm ci --omit=dev` installs on this platform (optional ones only where they fit). */
function productionPackages(lock: Lockfile): Array<[string, LockEntry]> {
  return Object.entries(lock.packages).filter(
    ([path, entry]) =>
      path !== '' &&
      !entry.dev &&
      (!(entry.optional || entry.devOptional) || (fits(entry.os, process.platform) && fits(entry.cpu, process.arch))),
  );
}

/** Production packages whose engines.node excludes one of `nodes`, as "path@version needs range (Node x)". */
function refusing(lock: Lockfile, nodes: string[]): string[] {
  return productionPackages(lock).flatMap(([path, entry]) => {
    const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
    if (!range) return [];
    return nodes
      .filter((node) => !semver.satisfies(node, range, { includePrerelease: true }))
      .map((node) => `${path.replace(/^node_modules\//, '')}@${entry.version} needs node ${range} (not ${node})`);
  });
}

const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as Lockfile;
const promised = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).engines.node as string;

describe('production dependencies', () => {
  it('all accept the running Node and the oldest Node package.json promises', () => {
    const oldest = semver.minVersion(promised)!.version;
    expect(productionPackages(lock).length).toBeGreaterThan(300);
    expect(refusing(lock, [process.version, oldest])).toEqual([]);
  });

  it('the check finds a package that wants a newer Node, and leaves dev and other-platform ones alone', () => {
    const made: Lockfile = {
      packages: {
        '': {},
        'node_modules/cookie': { version: '2.0.2', engines: { node: '>=22' } },
        'node_modules/dev-only': { version: '1.0.0', dev: true, engines: { node: '>=22' } },
        'node_modules/@x/other-platform': {
          version: '1.0.0',
          optional: true,
          os: [process.platform === 'win32' ? 'darwin' : 'win32'],
          engines: { node: '>=99' },
        },
        'node_modules/fine': { version: '1.0.0', engines: { node: '>=18' } },
      },
    };
    expect(refusing(made, ['20.20.2'])).toEqual(['cookie@2.0.2 needs node >=22 (not 20.20.2)']);
  });
});
