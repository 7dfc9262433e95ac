import type { FastifyInstance } from 'fastify';
import type { AuditRecord } from '../domain/audit/audit-log.js';
import { type Form, formFields, html } from '../web/html.js';
import { render, viewOf } from './view.js';

const ACTIONS = [
  'api_key.created',
  'api_key.revoked',
  'api_key.controls_changed',
  'webhook_endpoint.created',
  'webhook_endpoint.updated',
  'webhook_endpoint.secret_rotated',
  'webhook_endpoint.secret_revealed',
  'webhook_endpoint.deleted',
  'payment_method.created',
  'payment_method.default_set',
  'payment_method.deleted',
  'business_customer.created',
  'business_customer.updated',
  'business_customer.disabled',
  'connect_app.created',
  'connect_app.deleted',
  'connect_grant.approved',
  'connect_grant.revoked',
  'graphql_access.changed',
  'trusted_documents.registered',
  'trusted_documents.removed',
  'account.password_reset',
  'account.pin_set',
  'account.pin_changed',
];

/** The account's audit trail in the chosen environment, newest first, filtered by action. */
export function registerAuditPage(app: FastifyInstance): void {
  const { auditLog } = app.services;

  app.get<{ Querystring: Form }>('/dashboard/audit', async (request, reply) => {
    const view = viewOf(request, reply);
    const asked = formFields(request.query).action;
    const action = asked && ACTIONS.includes(asked) ? asked : undefined;
    const { records } = await auditLog.list(view.principal, { action }, 100);
    const row = (r: AuditRecord) =>
      html`<tr><td>${r.createdAt.toISOString()}</td><td><code>${r.action}</code></td><td>${r.targetType} <code>${r.targetId}</code></td><td>${r.actorKind}${r.actorId ? html` <code>${r.actorId}</code>` : ''}</td><td>${r.ip ?? ''}</td><td>${r.userAgent ?? ''}</td><td><code>${JSON.stringify(r.changes)}</code></td></tr>`;
    return render(
      reply,
      view,
      'audit',
      'Audit trail',
      html`<div class="card"><h1>Audit trail</h1>
<p class="muted">Changes to keys, webhooks, payment methods, customers, Connect apps and account security in ${view.environment}, newest first (the last 100). Secrets are never recorded, only that they changed.</p>
<form method="get" action="/dashboard/audit"><input type="hidden" name="env" value="${view.environment}">
<label for="f-action">Action</label><select id="f-action" name="action"><option value="">all</option>${ACTIONS.map((a) => html`<option value="${a}"${a === action ? ' selected' : ''}>${a}</option>`)}</select>
<button>Filter</button></form>
<table id="audit"><tr><th>When</th><th>Action</th><th>What</th><th>Who</th><th>From</th><th>User agent</th><th>Changes</th></tr>
${records.map(row)}</table>${records.length === 0 ? html`<p class="muted">Nothing recorded yet.</p>` : ''}</div>`,
    );
  });
}
