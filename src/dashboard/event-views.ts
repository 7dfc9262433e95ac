import type { StoredEvent } from '../domain/events/event.js';
import type {
  EventDelivery,
  EventDeliverySummary,
  WebhookAttempt,
  WebhookEndpoint,
} from '../domain/webhooks/webhook.js';
import { csrfField, html, type SafeHtml } from '../web/html.js';
import type { DashboardView } from './view.js';

/** The pieces of the events pages: an event's payload, where it went, each attempt, the re-send form. */

export const createdAt = (event: StoredEvent) => new Date(event.created * 1000);

export const eventHref = (view: DashboardView, event: { id: string }) =>
  `/dashboard/events/${event.id}?env=${view.environment}`;

/** The event's `data` as JSON: indented on the event's page, on one wrapped line in the list. */
export const payloadOf = (event: StoredEvent, layout: 'indented' | 'compact' = 'indented') =>
  layout === 'indented'
    ? html`<pre class="payload" style="max-height:24rem;overflow:auto;margin:0;white-space:pre-wrap;word-break:break-all">${JSON.stringify(event.data, null, 2)}</pre>`
    : html`<code class="payload" style="display:block;max-height:8rem;overflow:auto;word-break:break-all">${JSON.stringify(event.data)}</code>`;

const attemptLine = (a: WebhookAttempt) =>
  html`<div class="attempt">#${a.attemptNumber} ${a.statusCode ?? a.error ?? ''} · ${a.startedAt} · ${a.durationMs} ms${a.manual ? ' · re-sent by hand' : ''}</div>`;

const endpointLabel = (d: EventDeliverySummary) =>
  html`<span class="endpoint">${d.endpointUrl}</span>${d.endpointDeleted ? html` <span class="tag">deleted</span>` : ''}`;

/** One line per endpoint for the list: where the event went and how that ended. */
export const deliverySummary = (deliveries: readonly EventDeliverySummary[]): SafeHtml =>
  deliveries.length === 0
    ? html`<span class="muted">sent to no endpoint</span>`
    : html`${deliveries.map(
        (d) =>
          html`<div class="delivery">${endpointLabel(d)} · <span class="status">${d.status}</span> · ${d.attemptCount} attempt${d.attemptCount === 1 ? '' : 's'}${d.nextAttemptAt ? html` · next retry ${d.nextAttemptAt}` : ''}</div>`,
      )}`;

/** Every delivery of the event with every attempt, for the event's page. */
export const deliveryTable = (deliveries: readonly EventDelivery[]): SafeHtml =>
  html`<table id="deliveries"><tr><th>Endpoint</th><th>Status</th><th>Attempts (response, time, duration)</th><th>Next retry</th></tr>
${deliveries.map(
  (d) =>
    html`<tr class="delivery" data-endpoint="${d.endpointId}"><td>${endpointLabel(d)}</td><td class="status">${d.status}</td><td>${d.attempts.length === 0 ? html`<span class="muted">not attempted yet</span>` : d.attempts.map(attemptLine)}</td><td class="next-retry">${d.nextAttemptAt ?? '—'}</td></tr>`,
)}</table>${deliveries.length === 0 ? html`<p class="muted">No endpoint received this event.</p>` : ''}`;

/**
 * Re-send to one endpoint: the account's endpoints, each marked with whether it already has a
 * delivery of the event (re-sent as a new attempt) or not (a new delivery).
 */
export function resendForm(
  view: DashboardView,
  event: StoredEvent,
  endpoints: readonly WebhookEndpoint[],
  deliveries: readonly EventDelivery[],
): SafeHtml {
  if (endpoints.length === 0)
    return html`<p class="muted">No webhook endpoints in ${view.environment}: <a href="/dashboard/webhooks?env=${view.environment}">add one</a> to send events to.</p>`;
  const delivered = new Set(deliveries.map((d) => d.endpointId));
  return html`<form method="post" action="/dashboard/events/${event.id}/resend">${csrfField(view.csrf)}<input type="hidden" name="env" value="${view.environment}">
<label for="f-endpoint">Send this event again to</label><select id="f-endpoint" name="endpointId">${endpoints.map(
    (e) =>
      html`<option value="${e.id}">${e.url}${delivered.has(e.id) ? ' (a new attempt of its delivery)' : ' (a new delivery)'}${e.enabled ? '' : ' · disabled'}</option>`,
  )}</select>
<div class="muted">Queued as a delivery job, signed like any delivery: it appears below once sent.</div>
<button id="resend">Re-send</button></form>`;
}
