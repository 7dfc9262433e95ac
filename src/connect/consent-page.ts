import type { AuthorizationRequest } from '../domain/connect/authorization-server.js';
import { SCOPES } from '../domain/connect/scopes.js';
import type { User } from '../domain/users/user.js';
import { csrfField, html } from '../web/html.js';
import { page } from '../web/layout.js';

/** The consent page: which app, what it may do, for which account and environment. */
export function consentPage(request: AuthorizationRequest, user: User, ticket: string, csrf: string): string {
  const { client } = request;
  const body = html`<div class="card narrow"><h1>Allow ${client.name}?</h1>
<p><strong id="app-name">${client.name}</strong> wants to act for <strong id="consent-account">${user.email}</strong> in <strong>${client.environment}</strong>.</p>
<p>It will be able to:</p><ul id="consent-scopes">${request.scopes.map((s) => html`<li><code>${s}</code>: ${SCOPES[s].description}</li>`)}</ul>
<p class="muted">After approving you go back to <code>${new URL(request.redirectUri).origin}</code>. You can revoke access at any time under Connected apps.</p>
<form method="post" action="/connect/authorize">${csrfField(csrf)}<input type="hidden" name="consent" value="${ticket}"><input type="hidden" name="client_id" value="${client.clientId}">
<button name="decision" value="approve" id="approve">Allow</button> <button name="decision" value="deny" class="secondary" id="deny">Deny</button></form></div>`;
  return page({ title: `Allow ${client.name}`, body });
}
