import type { FastifyInstance, FastifyReply } from 'fastify';
import { EVENT_KINDS } from '../domain/webhooks/event-kinds.js';
import { type Form, formFields, html, notice, type SafeHtml } from '../web/html.js';
import { createdAt, deliverySummary, deliveryTable, eventHref, payloadOf, resendForm } from './event-views.js';
import { attempt, type DashboardView, render, viewOf } from './view.js';

export const EVENTS_PER_PAGE = 25;

/** A `before` from the query: absent, or the number given (the service refuses a bad one). */
const beforeOf = (raw: string | undefined) => (raw === undefined || raw === '' ? undefined : Number(raw));

/**
 * The account's events in one environment, newest first, filtered by kind, each with its payload
 * and where it was delivered; an event's page shows every attempt and re-sends it to one endpoint
 * through the delivery jobs (the webhook service), never by a request of its own.
 */
export function registerEventsPage(app: FastifyInstance): void {
  const { events, webhooks } = app.services;

  app.get<{ Querystring: Form }>('/dashboard/events', async (request, reply) => {
    const view = viewOf(request, reply);
    const query = formFields(request.query);
    const kind = query.kind && (EVENT_KINDS as readonly string[]).includes(query.kind) ? query.kind : undefined;
    const result = await attempt(() =>
      events.history(view.principal, {
        before: beforeOf(query.before),
        first: EVENTS_PER_PAGE,
        types: kind ? [kind] : undefined,
      }),
    );
    const page = result.value ?? { events: [], nextBefore: null };
    const deliveries = await webhooks.deliverySummariesOfEvents(
      view.principal,
      page.events.map((e) => e.id),
    );
    const link = (before?: number) =>
      `/dashboard/events?env=${view.environment}${kind ? `&kind=${encodeURIComponent(kind)}` : ''}${before ? `&before=${before}` : ''}`;
    return render(
      reply,
      view,
      'events',
      'Events',
      html`${notice(result.error, 'error')}<div class="card"><h1>Events · ${view.environment}</h1>
<p class="muted">What the account's operations emitted, newest first, ${EVENTS_PER_PAGE} a page: each event's payload (as webhooks and subscriptions carry it in <code>data</code>) and the endpoints it was delivered to.</p>
<form method="get" action="/dashboard/events"><input type="hidden" name="env" value="${view.environment}">
<label for="f-kind">Kind</label><select id="f-kind" name="kind"><option value="">all</option>${EVENT_KINDS.map((k) => html`<option value="${k}"${k === kind ? ' selected' : ''}>${k}</option>`)}</select>
<button id="filter">Filter</button></form>
<table id="events"><tr><th>When</th><th>Kind</th><th>Payload</th><th>Delivered to</th></tr>
${page.events.map(
  (e) =>
    html`<tr class="event" id="event-${e.id}" data-seq="${e.seq}"><td>${createdAt(e)}<div class="muted"><a href="${eventHref(view, e)}" class="event-link">${e.id}</a></div></td><td><code class="kind">${e.type}</code></td><td>${payloadOf(e, 'compact')}</td><td>${deliverySummary(deliveries.get(e.id) ?? [])}</td></tr>`,
)}</table>${page.events.length === 0 ? html`<p class="muted">No events${kind ? html` of kind <code>${kind}</code>` : ''} in ${view.environment}.</p>` : ''}
<p>${beforeOf(query.before) !== undefined ? html`<a href="${link()}" id="newest">Newest</a> ` : ''}${page.nextBefore ? html`<a href="${link(page.nextBefore)}" id="older">Older events</a>` : ''}</p></div>`,
      result.status,
    );
  });

  const eventPage = async (
    reply: FastifyReply,
    view: DashboardView,
    id: string,
    top: SafeHtml | string = '',
    status = 200,
  ) => {
    const event = await events.get(view.principal, id);
    const [deliveries, endpoints] = await Promise.all([
      webhooks.deliveriesOfEvent(view.principal, event.id),
      webhooks.list(view.principal),
    ]);
    return render(
      reply,
      view,
      'events',
      `Event ${event.type}`,
      html`${top}<div class="card"><h1 id="event-kind">${event.type}</h1>
<p class="muted"><code id="event-id">${event.id}</code> · ${createdAt(event)} · position ${event.seq} · ${view.environment} · <a href="/dashboard/events?env=${view.environment}">all events</a></p>
<h2>Payload</h2>${payloadOf(event)}</div>
<div class="card"><h2>Deliveries</h2><p><a href="${eventHref(view, event)}" id="refresh">Refresh</a></p>
${deliveryTable(deliveries)}
${resendForm(view, event, endpoints, deliveries)}</div>`,
      status,
    );
  };

  app.get<{ Params: { id: string } }>('/dashboard/events/:id', async (request, reply) =>
    eventPage(reply, viewOf(request, reply), request.params.id),
  );

  app.post<{ Params: { id: string }; Body: Form }>(
    '/dashboard/events/:id/resend',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const view = viewOf(request, reply);
      const result = await attempt(() =>
        webhooks.resendEvent(view.principal, request.params.id, formFields(request.body).endpointId ?? ''),
      );
      if (!result.value) return eventPage(reply, view, request.params.id, notice(result.error, 'error'), result.status);
      const what = result.value.created ? 'A new delivery' : 'A new attempt of its delivery';
      return eventPage(reply, view, request.params.id, notice(`${what} is queued: it appears below once sent.`), 202);
    },
  );
}
