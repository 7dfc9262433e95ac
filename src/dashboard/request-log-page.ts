import type { FastifyInstance } from 'fastify';
import type { LoggedRequest } from '../http/key-request-log.js';
import { html } from '../web/html.js';
import { render, viewOf } from './view.js';

/**
 * An API key's last requests, as the instance that serves the page answered them: the log lives in
 * each instance's memory (http/key-request-log.ts), so behind a load balancer each instance
 * shows its own, and the page says which one answered.
 */
export function registerRequestLogPage(app: FastifyInstance): void {
  const { apiKeys, requestLog } = app.services;

  app.get<{ Params: { id: string } }>('/dashboard/keys/:id/requests', async (request, reply) => {
    const view = viewOf(request, reply);
    const key = await apiKeys.getOwned(view.account.user.id, request.params.id);
    const requests = requestLog.of(key.id);
    const row = (r: LoggedRequest) =>
      html`<tr class="request"><td>${new Date(r.at)}</td><td>${r.method}</td><td><code class="path">${r.path}</code></td><td class="status">${r.statusCode}</td><td>${r.durationMs} ms</td><td><code class="request-id">${r.requestId}</code></td></tr>`;
    return render(
      reply,
      view,
      'keys',
      `Requests of ${key.name}`,
      html`<div class="card"><h1>Recent requests · ${key.name}</h1>
<p><code>${key.displayPrefix}</code> · ${key.environment}${key.revokedAt ? html` · revoked ${key.revokedAt}` : ''} · <a href="/dashboard/keys?env=${view.environment}">all keys</a></p>
<p class="muted" id="instance-note">Answered by instance <code id="instance">${requestLog.instance}</code>: these are the requests this instance served with the key (its last ${requestLog.limits.perKey}, while they are among the instance's last ${requestLog.limits.overall} requests), kept in its memory since it started. Requests other instances served are not merged in; reloading the page may reach another instance. Method, path (a query string shows as <code>?…</code>), status, duration and request id only: never bodies or headers.</p>
<table id="requests"><tr><th>When</th><th>Method</th><th>Path</th><th>Status</th><th>Duration</th><th>Request id</th></tr>
${requests.map(row)}</table>${requests.length === 0 ? html`<p class="muted" id="no-requests">No requests with this key on this instance yet.</p>` : ''}</div>`,
    );
  });
}
