/**
 * Compiles the sandbox's contracts (scripts/evm/contracts) with solc 0.8.30 from npm into the
 * artifact the sandbox chains deploy from (src/domain/evm/sandbox-contracts.json): each contract's
 * ABI and creation bytecode, with the compiler version and settings that made them.
 *
 * Deterministic: fixed settings, sources read in a fixed order, and no metadata appended to the
 * bytecode (no hash of the sources' paths or comments), so a recompile is byte-identical. CI
 * recompiles into a temporary file and fails when it differs from the committed one.
 *
 *   npm run evm:contracts              rewrites the committed artifact
 *   npm run evm:contracts -- <file>    writes elsewhere (the CI check)
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const solc = require('solc') as { compile(input: string, callbacks?: object): string; version(): string };

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SOURCES = join(ROOT, 'scripts', 'evm', 'contracts');
export const ARTIFACT = join(ROOT, 'src', 'domain', 'evm', 'sandbox-contracts.json');
/** The contracts the artifact holds, by the file that defines each. */
const CONTRACTS = { SandboxToken: 'SandboxToken.sol', WETH9: 'WETH9.sol' } as const;

/** The compiler's settings, written into the artifact beside the output they made. */
export const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  // Cancun: the hardfork the sandbox VM runs (no Prague calldata floor in gas estimates).
  evmVersion: 'cancun',
  metadata: { appendCBOR: false, bytecodeHash: 'none' },
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
} as const;

interface SolcOutput {
  errors?: Array<{ severity: string; formattedMessage: string }>;
  contracts: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
}

/** OpenZeppelin's sources, as the contracts import them, from node_modules. */
function findImport(path: string): { contents: string } | { error: string } {
  try {
    return { contents: readFileSync(require.resolve(path), 'utf8') };
  } catch {
    return { error: `not found: ${path}` };
  }
}

/** The artifact's text: compiled now, from the sources as they are. */
export function compileArtifact(): string {
  const sources = Object.fromEntries(
    Object.values(CONTRACTS).map((file) => [file, { content: readFileSync(join(SOURCES, file), 'utf8') }]),
  );
  const output = JSON.parse(
    solc.compile(JSON.stringify({ language: 'Solidity', sources, settings: SETTINGS }), { import: findImport }),
  ) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const contracts = Object.fromEntries(
    Object.entries(CONTRACTS).map(([name, file]) => {
      const compiled = output.contracts[file]?.[name];
      if (!compiled) throw new Error(`solc produced no ${name}`);
      return [name, { abi: compiled.abi, bytecode: `0x${compiled.evm.bytecode.object}` }];
    }),
  );
  const text = JSON.stringify({ compiler: `solc ${solc.version()}`, settings: SETTINGS, contracts }, null, 2);
  // In the repository's own format (Biome's), so that formatting the file never changes it.
  return execFileSync(join(ROOT, 'node_modules', '.bin', 'biome'), ['format', `--stdin-file-path=${ARTIFACT}`], {
    cwd: ROOT,
    input: text,
    encoding: 'utf8',
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const target = process.argv[2] ?? ARTIFACT;
  writeFileSync(target, compileArtifact());
  console.log(`wrote ${target}`);
}
