import type { FastifyInstance, FastifyReply } from 'fastify';
import { ENVIRONMENTS, type Environment } from '../domain/auth/permissions.js';
import { SCOPE_NAMES, SCOPES } from '../domain/connect/scopes.js';
import { csrfField, field, type Form, formFields, formValues, html, notice, type SafeHtml } from '../web/html.js';
import { attempt, type DashboardView, render, viewOf } from './view.js';

/** Connected apps (the apps this person let in, with revoke) and developer apps (OAuth clients this person registered). */
export function registerAppsPages(app: FastifyInstance): void {
  const { authorizationServer, oauthClients } = app.services;

  app.get('/dashboard/connected-apps', async (request, reply) => {
    const view = viewOf(request, reply);
    const apps = await authorizationServer.connectedApps(view.account.user.id);
    return render(
      reply,
      view,
      'connected',
      'Connected apps',
      html`<div class="card"><h1>Connected apps</h1>
<p class="muted">Apps you allowed to act for you through Connect. Revoking one ends its access at once.</p>
<table id="connected-apps"><tr><th>App</th><th>Environment</th><th>Access</th><th>Since</th><th></th></tr>
${apps.map(
  (
    a,
  ) => html`<tr><td>${a.name}</td><td>${a.environment}</td><td>${a.scopes.map((s) => html`<span class="tag">${s}</span>`)}</td><td>${a.connectedAt}</td>
<td><form class="inline" method="post" action="/dashboard/connected-apps/${a.clientPk}/revoke">${csrfField(view.csrf)}<button class="danger" id="revoke-${a.clientId}">Revoke access</button></form></td></tr>`,
)}
</table>${apps.length === 0 ? html`<p class="muted">No app has access.</p>` : ''}</div>`,
    );
  });

  app.post<{ Params: { clientPk: string } }>(
    '/dashboard/connected-apps/:clientPk/revoke',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const view = viewOf(request, reply);
      await authorizationServer.disconnectApp(view.account.user.id, request.params.clientPk, view.origin);
      return reply.redirect('/dashboard/connected-apps', 303);
    },
  );

  const developerPage = async (reply: FastifyReply, view: DashboardView, top: SafeHtml | string = '', status = 200) => {
    const clients = await oauthClients.list(view.account.user.id);
    return render(
      reply,
      view,
      'apps',
      'Developer apps',
      html`${top}<div class="card"><h1>Developer apps</h1>
<p class="muted">Apps that ask other users for access through Connect (<code>/connect/authorize</code>).</p>
<table id="developer-apps"><tr><th>Name</th><th>client_id</th><th>Type</th><th>Environment</th><th>Redirect URIs</th><th>Scopes</th><th></th></tr>
${clients.map(
  (
    c,
  ) => html`<tr><td>${c.name}</td><td><code>${c.clientId}</code></td><td>${c.clientType}</td><td>${c.environment}</td><td>${c.redirectUris.map((u) => html`<div><code>${u}</code></div>`)}</td><td>${c.allowedScopes.map((s) => html`<span class="tag">${s}</span>`)}</td>
<td><a href="/dashboard/graphql-access/connect_app/${c.id}" id="graphql-access-${c.clientId}">GraphQL access and origins</a> <form class="inline" method="post" action="/dashboard/apps/${c.id}/delete">${csrfField(view.csrf)}<button class="danger">Delete</button></form></td></tr>`,
)}
</table>${clients.length === 0 ? html`<p class="muted">No apps registered.</p>` : ''}</div>
<div class="card"><h2>Register an app</h2><form method="post" action="/dashboard/apps">${csrfField(view.csrf)}
${field('Name', 'name', { hint: 'Shown to users on the consent page.' })}
<label for="f-env">Environment</label><select id="f-env" name="env">${ENVIRONMENTS.map((e) => html`<option value="${e}">${e}</option>`)}</select>
<label for="f-type">Type</label><select id="f-type" name="clientType"><option value="confidential">confidential (a server that keeps a secret)</option><option value="public">public (browser or mobile app: PKCE, no secret)</option></select>
<label for="f-redirect">Redirect URIs, one per line</label><textarea id="f-redirect" name="redirectUris" rows="3" required></textarea>
<label>Scopes it may ask for</label>${SCOPE_NAMES.map((s) => html`<label class="muted" style="font-weight:400"><input type="checkbox" name="scopes" value="${s}" ${s === 'read' ? 'checked' : ''}> <code>${s}</code>: ${SCOPES[s].description}</label>`)}
<button id="register-app">Register app</button></form></div>`,
      status,
    );
  };

  app.get('/dashboard/apps', async (request, reply) => developerPage(reply, viewOf(request, reply)));

  app.post<{ Body: Form }>('/dashboard/apps', { preHandler: app.csrfProtection }, async (request, reply) => {
    const view = viewOf(request, reply);
    const raw = request.body ?? {};
    const form = formFields(raw);
    const result = await attempt(() =>
      oauthClients.register(
        view.account.user.id,
        {
          name: form.name ?? '',
          environment: (form.env === 'production' ? 'production' : 'sandbox') as Environment,
          clientType: form.clientType === 'public' ? 'public' : 'confidential',
          redirectUris: (form.redirectUris ?? '')
            .split(/\r?\n/)
            .map((u) => u.trim())
            .filter(Boolean),
          allowedScopes: formValues(raw.scopes),
        },
        view.origin,
      ),
    );
    if (!result.value) return developerPage(reply, view, notice(result.error, 'error'), result.status);
    const { client, clientSecret } = result.value;
    return developerPage(
      reply,
      view,
      html`<div class="card"><h2>${client.name} is registered</h2>
<p>client_id: <code id="client-id">${client.clientId}</code></p>
${clientSecret ? html`<p>client_secret (shown once; keep it on your server):</p><div class="secret" id="client-secret">${clientSecret}</div>` : html`<p class="muted">A public client has no secret: it must use PKCE (S256).</p>`}</div>`,
      201,
    );
  });

  app.post<{ Params: { id: string } }>(
    '/dashboard/apps/:id/delete',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const view = viewOf(request, reply);
      await oauthClients.revoke(view.account.user.id, request.params.id, view.origin);
      return reply.redirect('/dashboard/apps', 303);
    },
  );
}
