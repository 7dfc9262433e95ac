import type { FastifyInstance } from 'fastify';
import { registerAccountPages } from './account-pages.js';
import { registerAccountSettingsPages } from './account-settings-page.js';
import { registerAppsPages } from './apps-page.js';
import { registerAuditPage } from './audit-page.js';
import { registerControlsPage } from './controls-page.js';
import { registerEventsPage } from './events-page.js';
import { registerGraphQLAccessPage } from './graphql-access-page.js';
import { registerKeysPage } from './keys-page.js';
import { registerRequestLogPage } from './request-log-page.js';
import { registerWebhooksPage } from './webhooks-page.js';

/** Account pages (open) and the dashboard (signed-in only), inside the browser-pages scope. */
export async function registerDashboard(scope: FastifyInstance): Promise<void> {
  registerAccountPages(scope);
  await scope.register(async (signedIn) => {
    signedIn.addHook('preHandler', async (request, reply) => {
      if (!request.account) return reply.redirect(`/signin?next=${encodeURIComponent(request.url)}`, 303);
    });
    registerAccountSettingsPages(signedIn);
    registerKeysPage(signedIn);
    registerRequestLogPage(signedIn);
    registerControlsPage(signedIn);
    registerWebhooksPage(signedIn);
    registerEventsPage(signedIn);
    registerAppsPages(signedIn);
    registerGraphQLAccessPage(signedIn);
    registerAuditPage(signedIn);
  });
}
