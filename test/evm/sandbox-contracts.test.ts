import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ARTIFACT, compileArtifact } from '../../scripts/evm/compile.js';

describe('the sandbox contracts artifact', () => {
  it('is byte-identical to a recompile of its sources (npm run evm:contracts)', () => {
    expect(compileArtifact()).toBe(readFileSync(ARTIFACT, 'utf8'));
  });
});
