import type { FastifyInstance } from 'fastify';
import { isOperator } from './operator-token.js';
import type { Services } from '../services.js';
import { html } from '../web/html.js';

/**
 * The operator's reconciliation page, `GET /operator/reconciliation`: notices (aged breaks,
 * clearing past its window), the latest runs and the open breaks. For operators only: it answers
 * `Authorization: Bearer <OPERATOR_TOKEN>`, never a partner's session or API key, and without
 * OPERATOR_TOKEN the route does not exist (404). Read-only: breaks are resolved in the admin CLI.
 */
export function registerOperatorPages(app: FastifyInstance, services: Services): void {
  const token = services.config.OPERATOR_TOKEN;
  if (!token) return;
  app.get('/operator/reconciliation', { schema: { hide: true } }, async (request, reply) => {
    if (!isOperator(request, reply, token)) return reply;
    const recon = services.reconciliation;
    const [notices, runs, breaks] = await Promise.all([recon.notices(), recon.runs(10), recon.breaks({ open: true })]);
    const maxAge = services.config.RECON_BREAK_MAX_AGE_HOURS;
    const page = html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Reconciliation</title>
<style>body{font:14px system-ui,sans-serif;margin:2rem}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3rem .5rem;text-align:left}.notice{background:#fff3cd;padding:.5rem;margin:.3rem 0}</style></head><body>
<h1>Reconciliation</h1>
${notices.agedBreaks > 0 ? html`<p class="notice">${notices.agedBreaks} open break(s) older than ${maxAge} h.</p>` : ''}
${notices.overdueClearing.map(
  (c) =>
    html`<p class="notice">${c.provider} (${c.environment}) clearing is ${c.clearingMinor} kobo past its settlement window (day ${c.businessDate}).</p>`,
)}
${notices.unreadProviders.map(
  (u) => html`<p class="notice">${u.provider} (${u.environment}) could not be read at the latest run: ${u.error}</p>`,
)}
<h2>Open breaks (${notices.openBreaks})</h2>
<table><tr><th>Id</th><th>Detected</th><th>Provider</th><th>Day</th><th>Item</th><th>Reference</th><th>Kind</th><th>Ours</th><th>Theirs</th></tr>
${breaks.map(
  (b) =>
    html`<tr><td>${b.id}</td><td>${b.detectedAt}</td><td>${b.provider} (${b.environment})</td><td>${b.businessDate}</td><td>${b.itemType}</td><td>${b.reference}</td><td>${b.kind}</td><td>${b.ourAmount ?? '-'} ${b.ourStatus ?? ''}</td><td>${b.theirAmount ?? '-'} ${b.theirStatus ?? ''}</td></tr>`,
)}</table>
<h2>Latest runs</h2>
<table><tr><th>Finished</th><th>Environment</th><th>Day</th><th>Trigger</th><th>Outcome</th><th>Matched</th><th>Breaks</th><th>Providers</th></tr>
${runs.map(
  (r) =>
    html`<tr><td>${r.finishedAt}</td><td>${r.environment}</td><td>${r.businessDate}</td><td>${r.trigger}</td><td>${r.outcome}</td><td>${r.matched}</td><td>${r.breaks}</td><td>${r.sources.map((s) => `${s.provider}${s.error ? ' (not read)' : ''}`).join(', ')}</td></tr>`,
)}</table>
<p>Resolve a break: <code>npm run admin -- recon-resolve &lt;id&gt; --note "…"</code></p>
</body></html>`;
    return reply.header('cache-control', 'no-store').type('text/html; charset=utf-8').send(page.value);
  });
}
