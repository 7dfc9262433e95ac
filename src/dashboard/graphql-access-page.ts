import type { FastifyInstance, FastifyReply } from 'fastify';
import { badInput } from '../domain/errors.js';
import type { GraphQLAccessView } from '../domain/graphql-access/graphql-access-service.js';
import type { CredentialRef } from '../domain/graphql-access/graphql-access.js';
import { documentsOfManifest } from '../domain/graphql-access/manifest.js';
import { csrfField, type Form, formFields, html, notice, type SafeHtml } from '../web/html.js';
import { attempt, type DashboardView, render, viewOf } from './view.js';

type Params = { kind: string; id: string };

/**
 * A key's or Connect app's GraphQL access (docs/graphql.md, "Trusted documents and per-credential
 * limits"): its settings, its trusted documents, and a box to paste a persisted-documents manifest
 * (or one document) into. Linked from the keys and developer apps pages.
 */
export function registerGraphQLAccessPage(app: FastifyInstance): void {
  const { graphqlAccess, config } = app.services;
  const pathOf = (ref: CredentialRef) => `/dashboard/graphql-access/${ref.kind}/${ref.id}`;

  const show = async (
    reply: FastifyReply,
    view: DashboardView,
    ref: CredentialRef,
    top: SafeHtml | string = '',
    status = 200,
  ) => {
    const access = await graphqlAccess.view(view.principal, ref);
    return render(
      reply,
      view,
      ref.kind === 'api_key' ? 'keys' : 'apps',
      'GraphQL access',
      html`${top}${page(view, access)}`,
      status,
    );
  };

  /** Runs a change, then shows the page with what it said. A credential of another account is 404. */
  const change = async (
    request: { params: Params },
    reply: FastifyReply,
    view: DashboardView,
    action: (ref: CredentialRef) => Promise<string>,
  ) => {
    const ref = refOf(request.params);
    if (!ref) return reply.callNotFound();
    const result = await attempt(() => action(ref));
    if (result.status === 404) return reply.callNotFound();
    return show(reply, view, ref, result.value ? notice(result.value) : notice(result.error, 'error'), result.status);
  };

  app.get<{ Params: Params }>('/dashboard/graphql-access/:kind/:id', async (request, reply) => {
    const view = viewOf(request, reply);
    const ref = refOf(request.params);
    if (!ref) return reply.callNotFound();
    const result = await attempt(() => show(reply, view, ref));
    return result.status === 404 ? reply.callNotFound() : result.value;
  });

  app.post<{ Params: Params; Body: Form }>(
    '/dashboard/graphql-access/:kind/:id',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const view = viewOf(request, reply);
      const form = formFields(request.body);
      // The form sends every setting; a blank limit is the gateway's.
      const limit = (value: string | undefined, field: string) => {
        const text = value?.trim() ?? '';
        if (text === '') return 0;
        if (!/^\d+$/.test(text)) throw badInput(field, `${field} must be a whole number (blank: the gateway's).`);
        return Number(text);
      };
      return change(request, reply, view, async (ref) => {
        await graphqlAccess.change(view.principal, ref, {
          trustedDocumentsOnly: form.trustedDocumentsOnly === 'on',
          maxCost: limit(form.maxComplexity, 'maxComplexity'),
          maxDepth: limit(form.maxDepth, 'maxDepth'),
          ...(ref.kind === 'connect_app'
            ? { allowedOrigins: (form.allowedOrigins ?? '').split(/\s+/).filter(Boolean) }
            : {}),
        });
        return 'Saved.';
      });
    },
  );

  app.post<{ Params: Params; Body: Form }>(
    '/dashboard/graphql-access/:kind/:id/documents',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const view = viewOf(request, reply);
      const text = formFields(request.body).documents?.trim() ?? '';
      return change(request, reply, view, async (ref) => {
        const done = await graphqlAccess.register(view.principal, ref, documentsOfPasted(text));
        return `${done.registered} registered, ${done.alreadyRegistered} already registered.`;
      });
    },
  );

  app.post<{ Params: Params; Body: Form }>(
    '/dashboard/graphql-access/:kind/:id/documents/remove',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const view = viewOf(request, reply);
      const hash = formFields(request.body).hash ?? '';
      return change(request, reply, view, async (ref) => {
        await graphqlAccess.remove(view.principal, ref, [hash]);
        return 'Removed.';
      });
    },
  );

  function page(view: DashboardView, access: GraphQLAccessView) {
    const ref = access.credential;
    const path = pathOf(ref);
    const isApp = ref.kind === 'connect_app';
    return html`<div class="card"><h1>GraphQL access of ${isApp ? 'app' : 'key'} <code>${ref.id}</code></h1>
<p class="muted">What this ${isApp ? "app's tokens" : 'key'} may do over GraphQL beyond ${isApp ? 'their scopes' : 'its permission'}. REST v1 routes are not held to these settings. See the GraphQL documentation, "Trusted documents".</p>
<form method="post" action="${path}?env=${view.environment}">${csrfField(view.csrf)}
<label><input type="checkbox" id="f-trusted" name="trustedDocumentsOnly"${access.trustedDocumentsOnly ? html` checked` : ''}> Trusted documents only: run the documents below and refuse any other (403 PERSISTED_QUERY_NOT_ALLOWED)</label>
<label for="f-complexity">Complexity limit (query cost; blank: the gateway's ${config.GRAPHQL_MAX_COST})</label><input id="f-complexity" name="maxComplexity" value="${access.maxCost?.toString() ?? ''}">
<label for="f-depth">Depth limit (blank: the gateway's ${config.GRAPHQL_MAX_DEPTH})</label><input id="f-depth" name="maxDepth" value="${access.maxDepth?.toString() ?? ''}">
${
  isApp
    ? html`<label for="f-origins">Browser origins, one per line (https://app.example.com; empty: the gateway's CORS_ORIGINS)</label><textarea id="f-origins" name="allowedOrigins" rows="3">${access.allowedOrigins.join('\n')}</textarea>`
    : ''
}
<button id="save-access">Save</button></form></div>
<div class="card"><h2>Trusted documents (${access.documents.length})</h2>
<table id="trusted-documents"><tr><th>Operation</th><th>Hash</th><th>Registered</th><th></th></tr>
${access.documents.map(
  (
    d,
  ) => html`<tr><td>${d.operationName ?? html`<span class="muted">anonymous</span>`}</td><td><code>sha256:${d.hash.slice(0, 16)}…</code></td><td>${d.createdAt}</td>
<td><form class="inline" method="post" action="${path}/documents/remove?env=${view.environment}">${csrfField(view.csrf)}<input type="hidden" name="hash" value="${d.hash}"><button class="danger">Remove</button></form></td></tr>`,
)}
</table>
<form method="post" action="${path}/documents?env=${view.environment}">${csrfField(view.csrf)}
<label for="f-documents">Register: paste a persisted-documents.json (the client preset's, or an Apollo manifest), or one document</label>
<textarea id="f-documents" name="documents" rows="6" required></textarea>
<button id="register-documents">Register</button></form></div>`;
  }
}

function refOf({ kind, id }: Params): CredentialRef | undefined {
  return kind === 'api_key' || kind === 'connect_app' ? { kind, id } : undefined;
}

/** A pasted manifest (JSON), or else one document's text. */
function documentsOfPasted(text: string): Array<{ hash?: string; body: string }> {
  if (text === '') throw badInput('documents', 'Paste a manifest or a document.');
  if (!text.startsWith('{') || !text.endsWith('}')) return [{ body: text }];
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch {
    // A document's selection set also starts with `{`.
    return [{ body: text }];
  }
  try {
    return documentsOfManifest(manifest);
  } catch (error) {
    throw badInput('documents', (error as Error).message);
  }
}
