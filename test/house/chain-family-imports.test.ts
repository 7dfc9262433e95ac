import { readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { sourceFiles, specifiersIn } from './module-imports.js';
import { describe, expect, it } from 'vitest';

/**
 * The chain-neutral core (src/domain/chain/) defines custody, chain sends, swaps and the family
 * interface once; each chain family (src/domain/solana/, src/domain/evm/ next) implements it in its
 * own folder. The core imports no family, and no family imports another: a second family is added
 * beside the first, never copied from it or wired into it. Families are given to the core by the
 * process's wiring (services.ts), which is outside src/domain.
 *
 * Inside a family, production code does not import its sandbox (files named sandbox-* or
 * litesvm-*), and no other domain does (reconciliation, activity, …): the sandbox's parts are given
 * by the wiring, so what production runs reads without them.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const DOMAIN = join(ROOT, 'src', 'domain');
const CORE = 'chain';
/** Every chain family's folder under src/domain; a new family is added here. */
const FAMILIES = new Set(['solana', 'evm']);
const SANDBOX_FILE = /^(sandbox-|litesvm-)/;

/** The folder under src/domain a path is in, and the file's name there (undefined outside src/domain). */
function placeOf(path: string): { dir: string; name: string } | undefined {
  const inDomain = relative(DOMAIN, path);
  if (inDomain.startsWith('..')) return undefined;
  const parts = inDomain.split(sep);
  return parts.length < 2 ? undefined : { dir: parts[0]!, name: parts.at(-1)! };
}

/** Why `file` may not import `specifier`; undefined when it may. */
function forbidden(file: string, specifier: string): string | undefined {
  const from = placeOf(file);
  if (!from) return undefined;
  if (specifier.startsWith('<computed')) return 'an import whose target cannot be read';
  if (!specifier.startsWith('.')) return undefined; // packages and node: builtins
  const to = placeOf(resolve(dirname(file), specifier));
  if (to && FAMILIES.has(to.dir) && !FAMILIES.has(from.dir) && SANDBOX_FILE.test(to.name))
    return `${from.dir} code importing the ${to.dir} sandbox (${to.name.replace(/\.js$/, '.ts')})`;
  if (!to || to.dir === from.dir) {
    if (to && FAMILIES.has(from.dir) && !SANDBOX_FILE.test(from.name) && SANDBOX_FILE.test(to.name))
      return `production ${from.dir} code importing its sandbox (${to.name.replace(/\.js$/, '.ts')})`;
    return undefined;
  }
  if (from.dir === CORE && FAMILIES.has(to.dir)) return `the core importing the ${to.dir} family`;
  if (FAMILIES.has(from.dir) && FAMILIES.has(to.dir)) return `the ${from.dir} family importing the ${to.dir} family`;
  return undefined;
}

/** `file: specifier (why)` for each forbidden import of `source`. */
function violationsIn(file: string, source: string): string[] {
  return specifiersIn(file, source).flatMap((specifier) => {
    const why = forbidden(file, specifier);
    return why ? [`${relative(ROOT, file)}: '${specifier}' (${why})`] : [];
  });
}

describe('the chain core and its families', () => {
  it('names the file and the import for every way across the lines (the check can fail)', () => {
    const core = join(DOMAIN, CORE, 'sample.ts');
    const coreSource = [
      "import { transferStore } from '../solana/transfer-store.js';",
      "export type { SolanaNetwork } from '../solana/networks.js';",
      "type T = import('../evm/evm-family.js').EvmFamily;",
      "const later = () => import('../evm/rpc.js');",
      "const computed = (name: string) => import('../' + name);",
      // Allowed: the core's own files, core folders, packages.
      "import { ChainFamilies } from './registry.js';",
      "import { IllegalTransition } from '../lifecycle/transition.js';",
      "import { DomainError } from '../errors.js';",
      "import type { Executor } from '../../db/client.js';",
      "import { Keypair } from '@solana/web3.js';",
    ].join('\n');
    expect(violationsIn(core, coreSource)).toEqual([
      "src/domain/chain/sample.ts: '../solana/transfer-store.js' (the core importing the solana family)",
      "src/domain/chain/sample.ts: '../solana/networks.js' (the core importing the solana family)",
      "src/domain/chain/sample.ts: '../evm/evm-family.js' (the core importing the evm family)",
      "src/domain/chain/sample.ts: '../evm/rpc.js' (the core importing the evm family)",
      "src/domain/chain/sample.ts: '<computed: '../' + name>' (an import whose target cannot be read)",
    ]);

    const family = join(DOMAIN, 'evm', 'sample.ts');
    const familySource = [
      "import { SOL_MINT } from '../solana/native-token.js';",
      "import { EvmSandbox } from './sandbox-chain.js';",
      // Allowed: the core, its own production files, other domains.
      "import type { ChainFamily } from '../chain/family.js';",
      "import { evmNetworks } from './networks.js';",
      "import { recordEvent } from '../events/outbox.js';",
    ].join('\n');
    expect(violationsIn(family, familySource)).toEqual([
      "src/domain/evm/sample.ts: '../solana/native-token.js' (the evm family importing the solana family)",
      "src/domain/evm/sample.ts: './sandbox-chain.js' (production evm code importing its sandbox (sandbox-chain.ts))",
    ]);
    // A family's sandbox files may use each other and the family's production code.
    expect(
      violationsIn(
        join(DOMAIN, 'solana', 'sandbox-amm.ts'),
        "import { x } from './litesvm-chain.js';\nimport { y } from './networks.js';",
      ),
    ).toEqual([]);
  });

  it('the core and the Solana family exist where the check looks', () => {
    expect(statSync(join(DOMAIN, CORE)).isDirectory()).toBe(true);
    expect(statSync(join(DOMAIN, 'solana')).isDirectory()).toBe(true);
  });

  it('no file under src/domain/chain/ or a family folder crosses the lines', () => {
    const dirs = [CORE, ...FAMILIES]
      .map((dir) => join(DOMAIN, dir))
      .filter((dir) => {
        try {
          return statSync(dir).isDirectory();
        } catch {
          return false;
        }
      });
    const files = dirs.flatMap(sourceFiles);
    expect(files.filter((file) => placeOf(file)?.dir === CORE).length).toBeGreaterThan(3);
    const found = files.flatMap((file) => violationsIn(file, readFileSync(file, 'utf8')));
    expect(found).toEqual([]);
  });

  it("no other domain imports a family's sandbox: the wiring gives it the sandbox's parts", () => {
    const sample = join(DOMAIN, 'reconciliation', 'sample.ts');
    expect(
      violationsIn(
        sample,
        [
          "import { SANDBOX_POOLS } from '../solana/sandbox-world.js';",
          "import type { LiteSvmChain } from '../solana/litesvm-chain.js';",
          // Allowed: a family's production files, the core.
          "import type { SolanaChain } from '../solana/chain.js';",
          "import type { ChainAdapter } from '../chain/chain-adapter.js';",
        ].join('\n'),
      ),
    ).toEqual([
      "src/domain/reconciliation/sample.ts: '../solana/sandbox-world.js' (reconciliation code importing the solana sandbox (sandbox-world.ts))",
      "src/domain/reconciliation/sample.ts: '../solana/litesvm-chain.js' (reconciliation code importing the solana sandbox (litesvm-chain.ts))",
    ]);
    const files = sourceFiles(DOMAIN).filter((file) => {
      const dir = placeOf(file)?.dir;
      return dir !== undefined && !FAMILIES.has(dir);
    });
    expect(files.some((file) => placeOf(file)?.dir === 'reconciliation')).toBe(true);
    const found = files.flatMap((file) => violationsIn(file, readFileSync(file, 'utf8')));
    expect(found).toEqual([]);
  });
});
