import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type DocumentNode, parse } from 'graphql';

export const SCHEMA_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../schema');

/** The text of each SDL file in `dir` (one per domain), in name order. */
export function readSdlFiles(dir = SCHEMA_DIR): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.graphql'))
    .sort()
    .map((f) => readFileSync(join(dir, f), 'utf8'));
}

/** The SDL files as one document. */
export function loadTypeDefs(dir = SCHEMA_DIR, texts = readSdlFiles(dir)): DocumentNode {
  const documents = texts.map((text) => parse(text));
  return { kind: documents[0]!.kind, definitions: documents.flatMap((d) => d.definitions) };
}
