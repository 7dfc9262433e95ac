import { documentsOfManifest } from '../../src/domain/graphql-access/manifest.js';

export interface UploadOptions {
  /** The gateway's base URL, e.g. http://localhost:4000. */
  url: string;
  /** A key with the manage ability (Account Management or Full Access), not the credential being set up. */
  key: string;
  credential: { kind: 'API_KEY' | 'CONNECT_APP'; id: string };
  /** The manifest's parsed JSON. */
  manifest: unknown;
  /** Also switch the credential to trusted documents only. */
  enforce: boolean;
  fetch?: typeof globalThis.fetch;
}

export interface UploadResult {
  registered: number;
  alreadyRegistered: number;
  trustedDocumentsOnly: boolean;
}

/** Documents per request: well inside the gateway's body limit with typical operations. */
const CHUNK = 100;

const REGISTER = `mutation RegisterTrustedDocuments($input: RegisterTrustedDocumentsInput!) {
  registerTrustedDocuments(input: $input) { registered alreadyRegistered access { trustedDocumentsOnly } }
}`;
const ENFORCE = `mutation EnforceTrustedDocuments($input: GraphQLAccessInput!) {
  setGraphQLAccess(input: $input) { trustedDocumentsOnly }
}`;

/**
 * Registers a manifest's documents for one key or app through the gateway's GraphQL API (so it works
 * against any deployment), then, with `enforce`, switches the credential to them. Throws the
 * gateway's first error message (which names the field at fault).
 */
export async function uploadManifest(options: UploadOptions): Promise<UploadResult> {
  const documents = documentsOfManifest(options.manifest);
  if (documents.length === 0) throw new Error('The manifest lists no documents.');
  const ask = async <T>(query: string, variables: Record<string, unknown>): Promise<T> => {
    const response = await (options.fetch ?? fetch)(`${options.url.replace(/\/+$/, '')}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': options.key },
      body: JSON.stringify({ query, variables }),
    });
    const result = (await response.json()) as { data?: T; errors?: Array<{ message: string }> };
    if (result.errors?.length || !result.data)
      throw new Error(result.errors?.[0]?.message ?? `HTTP ${response.status}`);
    return result.data;
  };
  const total = { registered: 0, alreadyRegistered: 0, trustedDocumentsOnly: false };
  for (let at = 0; at < documents.length; at += CHUNK) {
    const { registerTrustedDocuments: done } = await ask<{
      registerTrustedDocuments: {
        registered: number;
        alreadyRegistered: number;
        access: { trustedDocumentsOnly: boolean };
      };
    }>(REGISTER, { input: { credential: options.credential, documents: documents.slice(at, at + CHUNK) } });
    total.registered += done.registered;
    total.alreadyRegistered += done.alreadyRegistered;
    total.trustedDocumentsOnly = done.access.trustedDocumentsOnly;
  }
  if (options.enforce && !total.trustedDocumentsOnly) {
    const { setGraphQLAccess } = await ask<{ setGraphQLAccess: { trustedDocumentsOnly: boolean } }>(ENFORCE, {
      input: { credential: options.credential, trustedDocumentsOnly: true },
    });
    total.trustedDocumentsOnly = setGraphQLAccess.trustedDocumentsOnly;
  }
  return total;
}
