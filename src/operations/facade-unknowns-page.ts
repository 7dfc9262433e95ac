import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';
import { html } from '../web/html.js';
import { isOperator } from './operator-token.js';

/**
 * A facade's operator page, `GET /operator/facade-unknowns`: its mutations whose outcome the
 * upstream never showed (the operator queue), then those the matcher still looks for, oldest
 * first. The same guard as the service's operator pages (OPERATOR_TOKEN as a bearer token; without
 * it the route does not exist). Read-only: entries are settled with `npm run admin -- facade-resolve`.
 */
export function registerFacadeOperatorPages(app: FastifyInstance, services: Services): void {
  const token = services.config.OPERATOR_TOKEN;
  const queue = services.unknownOutcomes;
  if (!token || !queue) return;
  app.get('/operator/facade-unknowns', { schema: { hide: true } }, async (request, reply) => {
    if (!isOperator(request, reply, token)) return reply;
    const entries = await queue.list({ all: true, limit: 500 });
    const queued = entries.filter((e) => e.queuedAt);
    const matching = entries.filter((e) => !e.queuedAt);
    const rows = (list: typeof entries) =>
      list.map(
        (e) =>
          html`<tr><td>${e.id}</td><td>${e.ageSeconds} s</td><td>${e.sentAt.toISOString()}</td><td>${e.environment} ${e.userId}</td><td>${e.operation}</td><td>${e.key}</td><td>${e.match ? `${e.match.type} ${e.match.customer} ${e.match.amountKobo ?? '-'} kobo${e.match.reference ? ` ref ${e.match.reference}` : ''}` : ''}</td><td>${e.lastLook ?? ''}</td></tr>`,
      );
    const head = html`<tr><th>Id</th><th>Age</th><th>Sent</th><th>Owner</th><th>Operation</th><th>Idempotency-Key</th><th>Looked for</th><th>Last look</th></tr>`;
    const page = html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Unknown outcomes</title>
<style>body{font:14px system-ui,sans-serif;margin:2rem}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3rem .5rem;text-align:left}</style></head><body>
<h1>Mutations of unknown outcome</h1>
<p>Sent to the upstream, no answer in time; never sent again by this facade.</p>
<h2>Operator queue (${queued.length})</h2>
<table>${head}${rows(queued)}</table>
<h2>Matcher still looking (${matching.length})</h2>
<table>${head}${rows(matching)}</table>
<p>Settle one: <code>npm run admin -- facade-resolve &lt;id&gt; --reference &lt;upstream bill reference&gt; --note "…"</code>, or with <code>--failed</code> when the upstream never took it.</p>
</body></html>`;
    return reply.header('cache-control', 'no-store').type('text/html; charset=utf-8').send(page.value);
  });
}
