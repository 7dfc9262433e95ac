/**
 * Registers a frontend's GraphQL documents as trusted documents of one API key or Connect app.
 *
 *   npm run trusted-documents -- --credential api_key:<key id> | connect_app:<app id> [--enforce]
 *                                [--url http://localhost:4000] [--key pgw_sbx_…] <manifest.json>
 *
 * The manifest is the client preset's persisted-documents.json (`persistedDocuments: true` in its
 * codegen config) or an Apollo persisted query manifest. The key (or PGW_API_KEY) is a key of the
 * same account with the manage ability, other than the one being set up (a credential never changes
 * its own). --enforce then switches the credential to trusted documents only: from then on /graphql
 * and the WebSocket run these documents and refuse any other for it. Without --url it follows the
 * server's own settings (PUBLIC_URL, else localhost on PORT). Registering again is harmless: a
 * document already registered is left as it is. See docs/graphql.md, "Trusted documents".
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { uploadManifest } from './trusted-documents/upload.js';

const USAGE =
  'Usage: npm run trusted-documents -- --credential api_key:<id>|connect_app:<id> [--enforce] [--url http://localhost:4000] [--key <manage key> (or PGW_API_KEY)] <manifest.json>';

const OPTIONS = {
  help: { type: 'boolean', short: 'h', default: false },
  credential: { type: 'string' },
  enforce: { type: 'boolean', default: false },
  key: { type: 'string', default: process.env.PGW_API_KEY },
  url: {
    type: 'string',
    default:
      process.env.PUBLIC_URL?.trim().replace(/\/+$/, '') || `http://localhost:${process.env.PORT?.trim() || 4000}`,
  },
} as const;

const fail = (message: string, code = 1): never => {
  process.stderr.write(`${message}\n`);
  process.exit(code);
};

let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
try {
  parsed = parseArgs({ options: OPTIONS, allowPositionals: true });
} catch (error) {
  fail(`${(error as Error).message}\n${USAGE}`, 2);
}
const { values, positionals } = parsed!;
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const credential = values.credential?.match(/^(api_key|connect_app):(\S+)$/);
if (!credential || !values.key || positionals.length !== 1) fail(USAGE, 2);

let manifest: unknown;
try {
  manifest = JSON.parse(readFileSync(positionals[0]!, 'utf8'));
} catch (error) {
  fail(`Could not read ${positionals[0]} as JSON: ${(error as Error).message}`);
}
try {
  const result = await uploadManifest({
    url: values.url,
    key: values.key!,
    credential: { kind: credential![1] === 'api_key' ? 'API_KEY' : 'CONNECT_APP', id: credential![2]! },
    manifest,
    enforce: values.enforce,
  });
  process.stdout.write(
    `${result.registered} registered, ${result.alreadyRegistered} already registered; trusted documents only: ${result.trustedDocumentsOnly ? 'on' : 'off'}.\n`,
  );
} catch (error) {
  // fetch's own failure names no address; the gateway's errors name the field at fault.
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  fail(
    cause
      ? `No gateway answers at ${values.url} (${cause.code ?? cause.message}).`
      : `The gateway refused: ${(error as Error).message}`,
  );
}
