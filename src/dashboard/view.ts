import type { FastifyReply, FastifyRequest } from 'fastify';
import { type AuditOrigin, originOf } from '../domain/audit/request-context.js';
import { ABILITIES, type Environment } from '../domain/auth/permissions.js';
import type { Principal } from '../domain/auth/principal.js';
import { DomainError } from '../domain/errors.js';
import { formFields, type SafeHtml } from '../web/html.js';
import { page } from '../web/layout.js';
import { csrfTokenFor, sendPage, type SignedInAccount } from '../web/pages-plugin.js';

/** What every dashboard handler works with: the person, the environment they are looking at, a CSRF token. */
export interface DashboardView {
  account: SignedInAccount;
  environment: Environment;
  /** The signed-in person acts for themselves with every ability, in the chosen environment. */
  principal: Principal;
  /** Where the request came from, acting as the session: for audited calls that take no principal. */
  origin: AuditOrigin;
  csrf: string;
}

export function environmentOf(request: FastifyRequest): Environment {
  const asked = formFields(request.body).env ?? formFields(request.query).env;
  return asked === 'production' ? 'production' : 'sandbox';
}

export function viewOf(request: FastifyRequest, reply: FastifyReply): DashboardView {
  const account = request.account;
  if (!account) throw new DomainError('UNAUTHENTICATED', 'Sign in first.');
  const environment = environmentOf(request);
  const origin = originOf(request, { kind: 'session', id: account.session.id });
  return {
    account,
    environment,
    principal: {
      kind: 'session',
      credentialId: account.session.id,
      userId: account.user.id,
      environment,
      abilities: new Set(ABILITIES),
      origin,
    },
    origin,
    csrf: csrfTokenFor(request, reply),
  };
}

export function render(
  reply: FastifyReply,
  view: DashboardView,
  section: string,
  title: string,
  body: SafeHtml,
  status = 200,
) {
  return sendPage(
    reply,
    page({ title, body, user: view.account.user, csrf: view.csrf, environment: view.environment, section }),
    status,
  );
}

/** Runs a form's action; an expected refusal (bad input, conflict…) comes back as a message for the page. */
export async function attempt<T>(action: () => Promise<T>): Promise<{ value?: T; error?: string; status: number }> {
  try {
    return { value: await action(), status: 200 };
  } catch (error) {
    if (error instanceof DomainError && error.status < 500) return { error: error.message, status: error.status };
    throw error;
  }
}
