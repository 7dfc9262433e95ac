import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';

const require = createRequire(import.meta.url);
/** A file inside an installed package, whether or not the package exports it. */
const packageFile = (name: string, file: string) => join(dirname(require.resolve(`${name}/package.json`)), file);

/**
 * GraphiQL served entirely from this process (React and GraphiQL UMD bundles from node_modules),
 * so it works on machines without internet. Paste an API key into the X-API-KEY header.
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
  <style>html, body, #explorer { height: 100%; margin: 0; }</style>
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
const fetcher = GraphiQL.createFetcher({ url: new URL('/graphql', location.href).toString() });
const root = ReactDOM.createRoot(document.getElementById('explorer'));
root.render(React.createElement(GraphiQL, {
  fetcher,
  defaultHeaders: JSON.stringify({ 'X-API-KEY': 'paste a sandbox API key here' }, null, 2),
  isHeadersEditorEnabled: true,
  shouldPersistHeaders: false,
  defaultQuery: '# Put your API key in the Headers tab below, then run:\\n{\\n  me {\\n    id\\n    email\\n    name\\n  }\\n}\\n',
}));
`;

export function wantsExplorer(request: FastifyRequest): boolean {
  const query = request.query as Record<string, unknown>;
  return !query?.query && (request.headers.accept ?? '').includes('text/html');
}

export function registerExplorer(app: FastifyInstance): void {
  const files = Object.fromEntries(Object.entries(ASSETS).map(([name, asset]) => [name, { body: readFileSync(asset.file), type: asset.type }]));
  app.get('/graphql/explorer/', { schema: { hide: true } }, (_request, reply) => reply.type('text/html; charset=utf-8').send(PAGE));
  app.get('/graphql/explorer/start.js', { schema: { hide: true } }, (_request, reply) => reply.type('text/javascript').send(START));
  app.get<{ Params: { name: string } }>('/graphql/explorer/:name', { schema: { hide: true } }, (request, reply) => {
    const file = files[request.params.name];
    if (!file) return reply.callNotFound();
    return reply.type(file.type).header('cache-control', 'public, max-age=86400').send(file.body);
  });
}
