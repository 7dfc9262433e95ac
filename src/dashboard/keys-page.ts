import type { FastifyInstance } from 'fastify';
import { ENVIRONMENTS, LEVEL_LABELS, parsePermissionLevel, PERMISSION_LEVELS } from '../domain/auth/permissions.js';
import { badInput } from '../domain/errors.js';
import { csrfField, field, type Form, formFields, html, notice } from '../web/html.js';
import { attempt, environmentOf, render, viewOf } from './view.js';

/** API keys: create (the value shown once), list with last use, revoke. */
export function registerKeysPage(app: FastifyInstance): void {
  const { apiKeys } = app.services;

  app.get('/dashboard/keys', async (request, reply) => {
    const view = viewOf(request, reply);
    return render(reply, view, 'keys', 'API keys', await keysPage(view.account.user.id, view.csrf));
  });

  app.post<{ Body: Form }>('/dashboard/keys', { preHandler: app.csrfProtection }, async (request, reply) => {
    const view = viewOf(request, reply);
    const form = formFields(request.body);
    const result = await attempt(async () => {
      const permission = parsePermissionLevel(form.permission ?? '');
      if (!permission) throw badInput('permission', 'Choose a permission.');
      return apiKeys.create(
        {
          userId: view.account.user.id,
          name: form.name ?? '',
          environment: environmentOf(request),
          permission,
        },
        view.principal,
      );
    });
    const created = result.value
      ? html`<div class="card"><h2>Your new key</h2><p>Copy it now: it is shown only once.</p><div class="secret" id="new-key">${result.value.key}</div></div>`
      : notice(result.error, 'error');
    return render(
      reply,
      view,
      'keys',
      'API keys',
      html`${created}${await keysPage(view.account.user.id, view.csrf)}`,
      result.value ? 201 : result.status,
    );
  });

  app.post<{ Params: { id: string } }>(
    '/dashboard/keys/:id/revoke',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const view = viewOf(request, reply);
      await apiKeys.revoke(view.account.user.id, request.params.id, undefined, view.principal);
      return reply.redirect(`/dashboard/keys?env=${view.environment}`, 303);
    },
  );

  async function keysPage(userId: string, csrf: string) {
    const keys = await apiKeys.list(userId);
    return html`<div class="card"><h1>API keys</h1>
<table id="keys"><tr><th>Name</th><th>Key</th><th>Environment</th><th>Permission</th><th>Created</th><th>Last used</th><th></th></tr>
${keys.map(
  (
    k,
  ) => html`<tr><td>${k.name}</td><td><code>${k.displayPrefix}</code></td><td>${k.environment}</td><td>${LEVEL_LABELS[k.permission]}</td><td>${k.createdAt}</td><td>${k.lastUsedAt ?? 'never'}</td>
<td><a href="/dashboard/keys/${k.id}/requests?env=${k.environment}" id="requests-${k.id}">Recent requests</a> ${k.revokedAt ? html`revoked ${k.revokedAt}` : html`<a href="/dashboard/controls?env=${k.environment}#key-${k.id}">Limits and allow-list</a> <a href="/dashboard/graphql-access/api_key/${k.id}?env=${k.environment}" id="graphql-access-${k.id}">GraphQL access</a> <form class="inline" method="post" action="/dashboard/keys/${k.id}/revoke">${csrfField(csrf)}<button class="danger">Revoke</button></form>`}</td></tr>`,
)}
</table>${keys.length === 0 ? html`<p class="muted">No keys yet.</p>` : ''}</div>
<div class="card"><h2>Create a key</h2><form method="post" action="/dashboard/keys">${csrfField(csrf)}
${field('Name', 'name', { hint: 'What uses it, e.g. "checkout server".' })}
<label for="f-env">Environment</label><select id="f-env" name="env">${ENVIRONMENTS.map((e) => html`<option value="${e}">${e}</option>`)}</select>
<label for="f-permission">Permission</label><select id="f-permission" name="permission">${PERMISSION_LEVELS.map((p) => html`<option value="${p}">${LEVEL_LABELS[p]}</option>`)}</select>
<button id="create-key">Create key</button></form></div>`;
  }
}
