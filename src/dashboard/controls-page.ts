import type { FastifyInstance } from 'fastify';
import type { ApiKeyRecord } from '../domain/auth/api-key-store.js';
import { allowListProblem } from '../domain/auth/ip-allow-list.js';
import { controlsFromText, type KeyControlsText } from '../domain/auth/key-controls-input.js';
import { type KeyControls, NO_CONTROLS } from '../domain/auth/key-controls.js';
import type { Environment } from '../domain/auth/permissions.js';
import { effectiveLimits, payoutLimitDefaultsOf } from '../domain/payouts/payout-limits.js';
import { nairaText } from '../domain/wallet/naira.js';
import { csrfField, type Form, formFields, html, notice } from '../web/html.js';
import { attempt, type DashboardView, render, viewOf } from './view.js';

/**
 * Payout controls: the cooling-off for new destinations (configuration, shown), and each key's
 * payout limits and IP allow-list (shown and edited; each change is an audit record).
 */
export function registerControlsPage(app: FastifyInstance): void {
  const { apiKeys, keyControls, config } = app.services;
  const defaults = payoutLimitDefaultsOf(config);

  app.get('/dashboard/controls', async (request, reply) => {
    const view = viewOf(request, reply);
    return render(reply, view, 'controls', 'Controls', await controlsPage(view));
  });

  app.post<{ Params: { id: string }; Body: Form }>(
    '/dashboard/controls/:id',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const view = viewOf(request, reply);
      const form = formFields(request.body);
      const result = await attempt(async () => {
        const typed = Object.fromEntries(
          CONTROL_FIELDS.map((field) => [field, changedField(form[field], form[`was_${field}`])]),
        ) as KeyControlsText;
        // A field the form did not send, or sent as the page showed it, keeps its stored value, read
        // under the save's lock: another save meanwhile (a second tab, the CLI) keeps what it wrote.
        // Only a field sent blank clears it (a client posting one field must not wipe the others).
        return keyControls.update(
          view.account.user.id,
          request.params.id,
          (current) => controlsFromText(typed, current),
          view.principal,
          view.environment,
        );
      });
      const message = result.value ? notice('Saved.') : notice(result.error, 'error');
      return render(reply, view, 'controls', 'Controls', html`${message}${await controlsPage(view)}`, result.status);
    },
  );

  async function controlsPage(view: DashboardView) {
    const keys = (await apiKeys.list(view.account.user.id)).filter(
      (k) => k.environment === view.environment && !k.revokedAt,
    );
    const controls = await keyControls.forKeys(keys.map((k) => k.id));
    const coolingApplies = view.environment === 'production' || config.PAYOUT_COOLING_OFF_SANDBOX;
    return html`<div class="card"><h1>Payout controls</h1>
<h2>Cooling-off for new destinations</h2>
<p id="cooling-off">${
      coolingApplies && config.PAYOUT_COOLING_OFF_MINUTES > 0
        ? html`For ${config.PAYOUT_COOLING_OFF_MINUTES} minutes after a bank account is added, payouts to it may total at most ₦${nairaText(BigInt(config.PAYOUT_COOLING_OFF_CAP_KOBO))}.`
        : html`Off in ${view.environment}.`
    }</p><p class="muted">Set by the operator (PAYOUT_COOLING_OFF_MINUTES, PAYOUT_COOLING_OFF_CAP_KOBO). Saving a bank account as a payment method ahead of time starts its period early.</p></div>
${keys.map((k) => keyCard(view, k, controls.get(k.id) ?? NO_CONTROLS))}
${keys.length === 0 ? html`<div class="card"><p class="muted">No active ${view.environment} keys.</p></div>` : ''}`;
  }

  function keyCard(view: DashboardView, key: ApiKeyRecord, own: KeyControls) {
    const principal = { ...view.principal, kind: 'api_key' as const, environment: key.environment as Environment };
    const inForce = effectiveLimits(principal, own, defaults);
    const base = effectiveLimits(principal, NO_CONTROLS, defaults);
    const naira = (kobo: bigint) => (kobo === 0n ? 'no limit' : `₦${nairaText(kobo)}`);
    const number = (n: number) => (n === 0 ? 'no limit' : String(n));
    const kobo = (v: bigint | null) => (v === null ? '' : nairaText(v));
    // Each field carries the value the page showed (was_…), so a save changes only what was edited.
    const row = (label: string, name: string, value: string, shown: string, fallback: string) =>
      html`<tr><td><label for="f-${key.id}-${name}">${label}</label></td><td>${shown}</td><td><input type="text" id="f-${key.id}-${name}" name="${name}" value="${value}" placeholder="default: ${fallback}"><input type="hidden" name="was_${name}" value="${value}"></td></tr>`;
    return html`<div class="card" id="key-${key.id}"><h2>${key.name} <code>${key.displayPrefix}</code></h2>
<form method="post" action="/dashboard/controls/${key.id}?env=${view.environment}">${csrfField(view.csrf)}
<table><tr><th>Limit</th><th>In force</th><th>This key (blank: default, 0: no limit)</th></tr>
${row('Per payout (₦)', 'maxPayout', kobo(own.maxPayoutKobo), naira(inForce.maxPayoutKobo), naira(base.maxPayoutKobo))}
${row('Total per 24 hours (₦)', 'maxDaily', kobo(own.maxDailyKobo), naira(inForce.maxDailyKobo), naira(base.maxDailyKobo))}
${row('Payouts per 24 hours', 'maxDailyCount', own.maxDailyCount?.toString() ?? '', number(inForce.maxDailyCount), number(base.maxDailyCount))}
${row('Payouts per hour', 'maxHourlyCount', own.maxHourlyCount?.toString() ?? '', number(inForce.maxHourlyCount), number(base.maxHourlyCount))}
</table>
${allowListWarning(key, own)}<label for="f-${key.id}-ipAllowList">IP allow-list</label><textarea id="f-${key.id}-ipAllowList" name="ipAllowList" rows="2" placeholder="e.g. 203.0.113.0/24, 2001:db8::/32">${own.ipAllowList.join('\n')}</textarea><input type="hidden" name="was_ipAllowList" value="${own.ipAllowList.join('\n')}">
<div class="muted">Addresses or CIDRs, IPv4 or IPv6, one per line, each /8 (IPv4) or /32 (IPv6) or narrower. Empty: the key works from anywhere. With a list, requests from other addresses are refused (403 IP_NOT_ALLOWED).</div>
<button id="save-${key.id}">Save</button></form></div>`;
  }
}

/**
 * A stored allow-list saved before the current bounds is kept (the key's other controls stay
 * editable) but said to be one a new save would refuse, so the owner narrows it.
 */
function allowListWarning(key: ApiKeyRecord, own: KeyControls) {
  const problem = allowListProblem(own.ipAllowList);
  return problem
    ? html`<div class="notice error" id="allow-list-warning-${key.id}">This key's allow-list is broader than a new list may be. ${problem} It stays in force until you change it; saving the other controls keeps it as it is.</div>`
    : '';
}

const CONTROL_FIELDS = ['maxPayout', 'maxDaily', 'maxDailyCount', 'maxHourlyCount', 'ipAllowList'] as const;

/**
 * A field as the save should read it: undefined (keep the stored value) when it was not sent or is
 * what the page showed. Browsers send a textarea's line breaks as CRLF.
 */
function changedField(sent: string | undefined, shown: string | undefined): string | undefined {
  if (sent === undefined) return undefined;
  const normal = (text: string) => text.replace(/\r\n?/g, '\n').trim();
  return shown !== undefined && normal(sent) === normal(shown) ? undefined : sent;
}
