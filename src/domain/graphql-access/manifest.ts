/**
 * The documents of a persisted-documents manifest, in either of the two shapes clients produce:
 * - graphql-codegen's client preset (`persistedDocuments: true`): `{ "sha256:<hex>": "<document>" }`;
 * - Apollo's persisted query manifest (`@apollo/generate-persisted-query-manifest`):
 *   `{ "format": "apollo-persisted-query-manifest", "operations": [{ "id": "<hex>", "body": "…" }] }`.
 * Each comes with its hash, which the gateway checks against the text when it registers it.
 */
export function documentsOfManifest(manifest: unknown): Array<{ hash: string; body: string }> {
  if (!manifest || typeof manifest !== 'object' || Array.isArray(manifest))
    throw new Error(
      "The manifest must be a JSON object (the client preset's persisted-documents.json, or an Apollo manifest).",
    );
  const record = manifest as Record<string, unknown>;
  if (record.format === 'apollo-persisted-query-manifest') {
    if (!Array.isArray(record.operations)) throw new Error('The Apollo manifest has no "operations" list.');
    return record.operations.map((operation, i) => {
      const { id, body } = (operation ?? {}) as { id?: unknown; body?: unknown };
      if (typeof id !== 'string' || typeof body !== 'string')
        throw new Error(`operations[${i}] needs a string "id" and "body".`);
      return { hash: id, body };
    });
  }
  return Object.entries(record).map(([hash, body]) => {
    if (typeof body !== 'string') throw new Error(`The manifest's entry ${hash} is not a document's text.`);
    return { hash, body };
  });
}
