import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { UpstreamWebhookReceiver } from '../domain/facade/inbound-webhooks.js';
import { badInput } from '../domain/errors.js';
import { accountOfUpstreamKey } from '../facade/upstream-key-account.js';
import type { Services } from '../services.js';
import { csrfField, field, formFields, html, notice, type SafeHtml } from '../web/html.js';
import { page } from '../web/layout.js';
import { csrfTokenFor, sendPage } from '../web/pages-plugin.js';
import { attempt } from './view.js';

export const FACADE_WEBHOOK_PAGE = '/facade/upstream-webhook';

/**
 * Facade mode's set-up page for one partner account's events (docs/facade.md#set-up-once-per-account):
 * a facade has no accounts or sign-in (they are the upstream's), so the partner proves the account
 * with one of its upstream keys in the form, each time; nothing of it is kept but what it sets.
 * Without a secret the form shows the account's inbound URL (to register upstream first); with
 * one it sets the secret and, if given, the gap-filling job's read key, as the API does.
 */
export function registerFacadeWebhookPage(pages: FastifyInstance, services: Services): void {
  pages.get(FACADE_WEBHOOK_PAGE, async (request, reply) => sendPage(reply, layout(form(csrfTokenFor(request, reply)))));

  pages.post(FACADE_WEBHOOK_PAGE, async (request, reply) => {
    const fields = formFields(request.body);
    const blank = (value: string | undefined) => (value === undefined || value === '' ? undefined : value);
    const key = blank(fields['upstreamKey']);
    const secret = blank(fields['secret']);
    const readKey = blank(fields['readKey']);
    const csrf = csrfTokenFor(request, reply);
    const outcome = await attempt(async () => {
      if (!key) throw badInput('upstreamKey', 'Give an upstream API key of the account.');
      const principal = await accountOfUpstreamKey(services, key, clientIpOf(request));
      const inbound = services.inboundWebhooks!;
      return secret ? inbound.register(principal, { secret, readKey }) : inbound.receiver(principal);
    });
    const saved =
      secret && outcome.value ? 'Saved. The upstream’s deliveries to the URL below are now taken.' : undefined;
    return sendPage(
      reply,
      layout(
        html`${notice(outcome.error, 'error')}${notice(saved)}${outcome.value ? state(outcome.value) : ''}${form(csrf)}`,
      ),
      outcome.status,
    );
  });
}

const clientIpOf = (request: FastifyRequest) => request.ip;

function layout(body: SafeHtml): string {
  return page({
    title: 'Upstream webhooks',
    body: html`<div class="card"><h1>Upstream webhooks</h1>
<p>This gateway is a facade: your account, keys and records are the upstream's. Its events reach you here once the
upstream delivers them to your account's own inbound URL on this gateway. Nothing you type is kept but the secret and read
key you set.</p></div>${body}`,
  });
}

function form(csrf: string): SafeHtml {
  return html`<div class="card"><form method="post" action="${FACADE_WEBHOOK_PAGE}" id="setup">${csrfField(csrf)}
${field('Upstream API key', 'upstreamKey', { type: 'password', autocomplete: 'off', hint: 'Any key of your account upstream: it proves the account is yours.' })}
${field('Upstream webhook secret', 'secret', { type: 'password', required: false, autocomplete: 'off', hint: 'Leave blank to see your inbound URL first. The upstream shows the secret in its Settings, Webhooks, once the URL is registered there.' })}
${field('Read key for the gap-filling job', 'readKey', { type: 'password', required: false, autocomplete: 'off', hint: 'Optional: an upstream key of the same account (Read Only is enough) that the facade lists your records with, for the events the upstream never delivered.' })}
<button id="submit">Show or save</button></form></div>`;
}

function state(receiver: UpstreamWebhookReceiver): SafeHtml {
  const when = (at: Date | null) => (at ? at.toISOString() : null);
  return html`<div class="card" id="receiver"><h2>Your account</h2><table>
<tr><th>Inbound URL (register it upstream: Settings, Webhooks, every event)</th><td><code id="inbound-url">${receiver.url}</code></td></tr>
<tr><th>Webhook secret</th><td id="secret-state">${when(receiver.secretSetAt) ? `set ${when(receiver.secretSetAt)}` : 'not set: deliveries answer 404 until it is'}</td></tr>
<tr><th>Gap-filling job</th><td id="gap-fill-state">${receiver.readKeySet ? 'read key set' : 'no read key: not run'}${receiver.filledAt ? `, last listed ${when(receiver.filledAt)}` : ''}</td></tr>
</table></div>`;
}
