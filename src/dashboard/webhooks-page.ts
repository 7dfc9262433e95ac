import type { FastifyInstance, FastifyReply } from 'fastify';
import { EVENT_KINDS } from '../domain/webhooks/event-kinds.js';
import type { WebhookEndpoint } from '../domain/webhooks/webhook.js';
import { csrfField, field, type Form, formFields, formValues, html, notice, type SafeHtml } from '../web/html.js';
import { attempt, type DashboardView, render, viewOf } from './view.js';

/**
 * The notice an endpoint in trouble gets on the dashboard: disabled automatically after days of
 * failure (with the reason and how to resume), or failing now (and when it will be disabled).
 */
function healthNotice(endpoint: WebhookEndpoint, disableAfterMs: number): SafeHtml | string {
  if (!endpoint.enabled && endpoint.disabledReason?.startsWith('Disabled automatically'))
    return notice(
      `${endpoint.url}: ${endpoint.disabledReason} Fix the receiver, then enable the endpoint again.`,
      'error',
    );
  if (endpoint.enabled && endpoint.failingSince)
    return notice(
      `${endpoint.url}: every delivery has failed since ${endpoint.failingSince.toISOString()}. If it keeps failing, it is disabled automatically after ${Math.round(disableAfterMs / 86_400_000)} days.`,
      'error',
    );
  return '';
}

/** Webhook endpoints of one environment: create, secret reveal and rotation, test events, the delivery log with re-send. */
export function registerWebhooksPage(app: FastifyInstance): void {
  const { webhooks } = app.services;
  const hidden = (view: DashboardView) =>
    html`${csrfField(view.csrf)}<input type="hidden" name="env" value="${view.environment}">`;

  const listPage = async (reply: FastifyReply, view: DashboardView, top: SafeHtml | string = '', status = 200) => {
    const endpoints = await webhooks.list(view.principal);
    return render(
      reply,
      view,
      'webhooks',
      'Webhooks',
      html`${top}${endpoints.map((e) => healthNotice(e, app.services.config.WEBHOOK_DISABLE_AFTER_MS))}<div class="card"><h1>Webhooks · ${view.environment}</h1>
<table id="endpoints"><tr><th>URL</th><th>Events</th><th>State</th><th></th></tr>
${endpoints.map((e) => html`<tr><td><a href="/dashboard/webhooks/${e.id}?env=${view.environment}">${e.url}</a><div class="muted">${e.description}</div></td><td>${e.eventTypes.map((t) => html`<span class="tag">${t}</span>`)}</td><td>${e.enabled ? 'enabled' : `disabled${e.disabledReason ? ` (${e.disabledReason})` : ''}`}</td><td><a href="/dashboard/webhooks/${e.id}?env=${view.environment}">Deliveries</a></td></tr>`)}
</table>${endpoints.length === 0 ? html`<p class="muted">No endpoints in ${view.environment}.</p>` : ''}</div>
<div class="card"><h2>Add an endpoint</h2><form method="post" action="/dashboard/webhooks">${hidden(view)}
${field('URL', 'url', { type: 'url', hint: view.environment === 'production' ? 'https only, on a public address.' : 'Sandbox accepts http and local addresses for testing.' })}
${field('Description', 'description', { required: false })}
<label>Events</label><div><label class="muted"><input type="checkbox" name="eventTypes" value="*" checked> every event</label>
${EVENT_KINDS.map((k) => html`<label class="muted" style="display:inline-block;margin-right:.8rem;font-weight:400"><input type="checkbox" name="eventTypes" value="${k}"> ${k}</label>`)}</div>
<button id="add-endpoint">Add endpoint</button></form></div>`,
      status,
    );
  };

  app.get('/dashboard/webhooks', async (request, reply) => listPage(reply, viewOf(request, reply)));

  app.post<{ Body: Form }>('/dashboard/webhooks', { preHandler: app.csrfProtection }, async (request, reply) => {
    const view = viewOf(request, reply);
    const raw = request.body ?? {};
    const form = formFields(raw);
    const kinds = formValues(raw.eventTypes);
    const result = await attempt(() =>
      webhooks.create(view.principal, {
        url: form.url ?? '',
        description: form.description || null,
        eventTypes: kinds.includes('*') || kinds.length === 0 ? ['*'] : kinds,
      }),
    );
    if (!result.value) return listPage(reply, view, notice(result.error, 'error'), result.status);
    return detailPage(reply, view, result.value.endpoint.id, secretBox('Signing secret', result.value.secret), 201);
  });

  const detailPage = async (
    reply: FastifyReply,
    view: DashboardView,
    id: string,
    top: SafeHtml | string = '',
    status = 200,
  ) => {
    const endpoint = await webhooks.get(view.principal, id);
    const deliveries = await webhooks.deliveries(view.principal, id, 50);
    const action = (path: string, label: string, buttonId: string, kind = 'secondary') =>
      html`<form class="inline" method="post" action="/dashboard/webhooks/${id}/${path}">${hidden(view)}<button class="${kind}" id="${buttonId}">${label}</button></form> `;
    return render(
      reply,
      view,
      'webhooks',
      'Webhook endpoint',
      html`${top}<div class="card"><h1>${endpoint.url}</h1>
<p>${endpoint.eventTypes.map((t) => html`<span class="tag">${t}</span>`)} · ${endpoint.enabled ? 'enabled' : 'disabled'} · ${view.environment}</p>
${action('reveal', 'Reveal secret', 'reveal-secret')}${action('rotate', 'Rotate secret', 'rotate-secret')}${action('test', 'Send test event', 'send-test')}${action('delete', 'Delete', 'delete-endpoint', 'danger')}
<p class="muted">Rotating keeps the old secret signing beside the new one for 24 hours.</p></div>
<div class="card"><h2>Delivery log</h2><p><a href="/dashboard/webhooks/${id}?env=${view.environment}" id="refresh-log">Refresh</a></p>
<table id="deliveries"><tr><th>Delivery</th><th>Status</th><th>Attempts</th><th></th></tr>
${deliveries.map(
  (
    d,
  ) => html`<tr class="delivery"><td><code>${d.eventId}</code><div class="muted">${d.createdAt}</div></td><td class="status">${d.status}</td>
<td>${d.attempts.map((a) => html`<div class="attempt">#${a.attemptNumber} ${a.statusCode ?? a.error ?? ''} · ${a.durationMs} ms · ${a.startedAt}${a.manual ? ' · manual' : ''}</div>`)}${d.nextAttemptAt ? html`<div class="muted">next ${d.nextAttemptAt}</div>` : ''}</td>
<td><form class="inline" method="post" action="/dashboard/webhooks/${id}/deliveries/${d.id}/resend">${hidden(view)}<button class="secondary">Re-send</button></form></td></tr>`,
)}
</table>${deliveries.length === 0 ? html`<p class="muted">Nothing delivered yet.</p>` : ''}</div>`,
      status,
    );
  };

  app.get<{ Params: { id: string } }>('/dashboard/webhooks/:id', async (request, reply) =>
    detailPage(reply, viewOf(request, reply), request.params.id),
  );

  app.post<{ Params: { id: string } }>(
    '/dashboard/webhooks/:id/reveal',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const view = viewOf(request, reply);
      return detailPage(
        reply,
        view,
        request.params.id,
        secretBox('Current signing secret', await webhooks.revealSecret(view.principal, request.params.id)),
      );
    },
  );
  app.post<{ Params: { id: string } }>(
    '/dashboard/webhooks/:id/rotate',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const view = viewOf(request, reply);
      const rotated = await webhooks.rotateSecret(view.principal, request.params.id);
      return detailPage(reply, view, request.params.id, secretBox('New signing secret', rotated.secret));
    },
  );
  app.post<{ Params: { id: string } }>(
    '/dashboard/webhooks/:id/test',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const view = viewOf(request, reply);
      await webhooks.sendTest(view.principal, request.params.id);
      return detailPage(
        reply,
        view,
        request.params.id,
        notice('Test event queued: it appears in the log once sent.'),
        202,
      );
    },
  );
  app.post<{ Params: { id: string; deliveryId: string } }>(
    '/dashboard/webhooks/:id/deliveries/:deliveryId/resend',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const view = viewOf(request, reply);
      await webhooks.resend(view.principal, request.params.deliveryId);
      return detailPage(reply, view, request.params.id, notice('Re-send queued.'), 202);
    },
  );
  app.post<{ Params: { id: string } }>(
    '/dashboard/webhooks/:id/delete',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const view = viewOf(request, reply);
      await webhooks.remove(view.principal, request.params.id);
      return reply.redirect(`/dashboard/webhooks?env=${view.environment}`, 303);
    },
  );
}

const secretBox = (title: string, secret: string) =>
  html`<div class="card"><h2>${title}</h2><p>Verify deliveries with it; keep it on your server only.</p><div class="secret" id="webhook-secret">${secret}</div></div>`;
