import type { FastifyInstance, FastifyReply } from 'fastify';
import { csrfField, field, type Form, formFields, html, notice, type SafeHtml } from '../web/html.js';
import { attempt, type DashboardView, render, viewOf } from './view.js';

/** The overview, the account's businesses, and the transaction PIN. */
export function registerAccountSettingsPages(app: FastifyInstance): void {
  const { users, accounts } = app.services;

  app.get('/dashboard', async (request, reply) => {
    const view = viewOf(request, reply);
    const user = view.account.user;
    return render(
      reply,
      view,
      'overview',
      'Overview',
      html`<div class="card"><h1>Welcome${user.firstName ? `, ${user.firstName}` : ''}</h1>
<p id="account-email">${user.email}${user.verified ? ' · verified' : ''}</p>
<p>You are looking at <strong>${view.environment}</strong>. Sandbox keys use simulated providers with magic values; production keys move real money.</p>
<ul><li><a href="/dashboard/keys">Create an API key</a> and call <code>GET /api/v1/user/me</code> with it.</li>
<li><a href="/dashboard/webhooks?env=${view.environment}">Add a webhook endpoint</a> to receive events.</li>
<li><a href="/dashboard/apps">Register an app</a> to ask other users for access through Connect.</li>
<li>Docs: <a href="/api/v1/docs">REST v1</a> · <a href="/graphql">GraphQL explorer</a></li></ul></div>`,
    );
  });

  const businessesPage = async (
    reply: FastifyReply,
    view: DashboardView,
    top: SafeHtml | string = '',
    status = 200,
  ) => {
    const businesses = await users.businessesOf(view.account.user.id);
    return render(
      reply,
      view,
      'businesses',
      'Businesses',
      html`${top}<div class="card"><h1>Businesses</h1>
<p class="muted">Business customers live under a business: <code>POST /api/v1/customers/{businessId}</code>.</p>
<table id="businesses"><tr><th>Name</th><th>businessId</th><th>Created</th></tr>
${businesses.map((b) => html`<tr><td>${b.name}</td><td><code>${b.id}</code></td><td>${b.createdAt}</td></tr>`)}</table>
${businesses.length === 0 ? html`<p class="muted">No businesses yet.</p>` : ''}</div>
<div class="card"><h2>Add a business</h2><form method="post" action="/dashboard/businesses">${csrfField(view.csrf)}${field('Name', 'name')}<button id="add-business">Add business</button></form></div>`,
      status,
    );
  };
  app.get('/dashboard/businesses', async (request, reply) => businessesPage(reply, viewOf(request, reply)));
  app.post<{ Body: Form }>('/dashboard/businesses', { preHandler: app.csrfProtection }, async (request, reply) => {
    const view = viewOf(request, reply);
    const result = await attempt(() => users.createBusiness(view.account.user.id, formFields(request.body).name ?? ''));
    return businessesPage(
      reply,
      view,
      result.value ? notice(`${result.value.name} added.`) : notice(result.error, 'error'),
      result.value ? 201 : result.status,
    );
  });

  const securityPage = (reply: FastifyReply, view: DashboardView, top: SafeHtml | string = '', status = 200) => {
    const hasPin = view.account.user.haveTransactionPin;
    return render(
      reply,
      view,
      'security',
      'Security',
      html`${top}<div class="card"><h1>Transaction PIN</h1>
<p id="pin-state">${hasPin ? 'Your transaction PIN is set.' : 'You have no transaction PIN yet.'}</p>
<form method="post" action="/dashboard/security/pin">${csrfField(view.csrf)}
${hasPin ? field('Current PIN', 'currentPin', { type: 'password', autocomplete: 'off' }) : ''}
${field(hasPin ? 'New PIN' : 'PIN', 'pin', { type: 'password', autocomplete: 'off', hint: '4 digits.' })}
<button id="save-pin">${hasPin ? 'Change PIN' : 'Set PIN'}</button></form></div>
<div class="card"><h2>Password</h2><p><a href="/forgot-password">Reset your password by email</a>: every session ends when it changes.</p></div>`,
      status,
    );
  };
  app.get('/dashboard/security', async (request, reply) => securityPage(reply, viewOf(request, reply)));
  app.post<{ Body: Form }>('/dashboard/security/pin', { preHandler: app.csrfProtection }, async (request, reply) => {
    const view = viewOf(request, reply);
    const result = await attempt(() =>
      accounts.setTransactionPin(
        view.account.user.id,
        formFields(request.body).pin ?? '',
        formFields(request.body).currentPin,
        view.origin,
      ),
    );
    if (result.value) view.account.user = result.value;
    return securityPage(
      reply,
      view,
      result.value ? notice('Transaction PIN saved.') : notice(result.error, 'error'),
      result.status,
    );
  });
}
