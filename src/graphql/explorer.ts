import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HOME_SCREEN } from './home-screen.js';

const require = createRequire(import.meta.url);
/** A file inside an installed package, whether or not the package exports it. */
const packageFile = (name: string, file: string) => join(dirname(require.resolve(`${name}/package.json`)), file);

/**
 * GraphiQL served entirely from this process (React and GraphiQL UMD bundles from node_modules),
 * so it works on machines without internet. Paste an API key into the X-API-KEY header. Subscriptions
 * run over the same WebSocket endpoint partners use.
 */
const ASSETS: Record<string, { file: string; type: string }> = {
  'react.js': { file: packageFile('react', 'umd/react.production.min.js'), type: 'text/javascript' },
  'react-dom.js': { file: packageFile('react-dom', 'umd/react-dom.production.min.js'), type: 'text/javascript' },
  'graphiql.js': { file: packageFile('graphiql', 'graphiql.min.js'), type: 'text/javascript' },
  'graphiql.css': { file: packageFile('graphiql', 'graphiql.min.css'), type: 'text/css' },
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <title>Partner Gateway · GraphQL explorer</title>
  <link rel="stylesheet" href="./graphiql.css" />
  <style>
    html, body, #explorer, .explorer { height: 100%; margin: 0; }
    .explorer { display: flex; flex-direction: column; }
    .key-bar { display: flex; gap: .5rem; align-items: center; padding: .5rem 1rem; font: 14px system-ui, sans-serif; border-bottom: 1px solid #ddd; }
    .key-bar input { flex: 1; max-width: 40rem; padding: .3rem .5rem; font: 13px monospace; }
    .editor { flex: 1; min-height: 0; }
  </style>
</head>
<body>
  <div id="explorer">Loading…</div>
  <script src="./react.js"></script>
  <script src="./react-dom.js"></script>
  <script src="./graphiql.js"></script>
  <script src="./start.js"></script>
</body>
</html>`;

const START = `
const h = React.createElement;
// Queries and mutations over HTTP; subscriptions over WebSocket (graphql-ws, bundled in GraphiQL),
// with the header editor's headers (the API key) sent as the connection's connectionParams.
const endpoint = new URL('/graphql', location.href);
const fetcher = GraphiQL.createFetcher({
  url: endpoint.toString(),
  subscriptionUrl: endpoint.toString().replace(/^http/, 'ws'),
});
const DEFAULT_QUERY = '# Enter your API key above, then press the run button.\\n{\\n  me {\\n    id\\n    email\\n    name\\n  }\\n}\\n';
// The first tab is the smallest query; the second, a whole home screen in one request.
const DEFAULT_TABS = [{ query: DEFAULT_QUERY }, { query: ${JSON.stringify(`# A home screen in one request: see docs/graphql.md.\n${HOME_SCREEN.trim().replace(/^ {2}/gm, '')}\n`)} }];

// The key lives in this page only: it is neither stored nor sent anywhere but /graphql.
function Explorer() {
  const [apiKey, setApiKey] = React.useState('');
  const headers = JSON.stringify(apiKey ? { 'X-API-KEY': apiKey } : {}, null, 2);
  return h('div', { className: 'explorer' },
    h('label', { className: 'key-bar' },
      h('span', null, 'API key'),
      h('input', { id: 'api-key', type: 'password', autoComplete: 'off', placeholder: 'pgw_sbx_…', value: apiKey, onChange: (e) => setApiKey(e.target.value.trim()) })),
    h('div', { className: 'editor' }, h(GraphiQL, { fetcher, headers, defaultQuery: DEFAULT_QUERY, defaultTabs: DEFAULT_TABS, shouldPersistHeaders: false, isHeadersEditorEnabled: true })));
}
ReactDOM.createRoot(document.getElementById('explorer')).render(h(Explorer));
`;
export function wantsExplorer(request: FastifyRequest): boolean {
  const query = request.query as Record<string, unknown>;
  return !query?.query && (request.headers.accept ?? '').includes('text/html');
}

export function registerExplorer(app: FastifyInstance): void {
  const files = Object.fromEntries(
    Object.entries(ASSETS).map(([name, asset]) => [name, { body: readFileSync(asset.file), type: asset.type }]),
  );
  app.get('/graphql/explorer/', { schema: { hide: true } }, (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(PAGE),
  );
  app.get('/graphql/explorer/start.js', { schema: { hide: true } }, (_request, reply) =>
    reply.type('text/javascript').send(START),
  );
  app.get<{ Params: { name: string } }>('/graphql/explorer/:name', { schema: { hide: true } }, (request, reply) => {
    const file = files[request.params.name];
    if (!file) return reply.callNotFound();
    return reply.type(file.type).header('cache-control', 'public, max-age=86400').send(file.body);
  });
}
