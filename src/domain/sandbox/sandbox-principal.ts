import type { Principal } from '../auth/principal.js';
import type { ClockOwner } from '../clock.js';
import { DomainError } from '../errors.js';

/**
 * A caller acting in the sandbox. Sandbox-only services (test clocks) take this type, not
 * `Principal`, so a production principal cannot reach them through any call the compiler accepts:
 * the only way to get one is `sandboxPrincipalOf`, which refuses a production key.
 */
export type SandboxPrincipal = Principal & { readonly environment: 'sandbox' };

/** An account of the sandbox: the only kind a test clock can belong to. */
export type SandboxAccount = ClockOwner & { readonly environment: 'sandbox' };

export const isSandboxAccount = (account: ClockOwner): account is SandboxAccount => account.environment === 'sandbox';

/** The caller as a sandbox principal; a production key is refused (FORBIDDEN) naming what it asked for. */
export function sandboxPrincipalOf(principal: Principal, what: string): SandboxPrincipal {
  if (!isSandboxPrincipal(principal))
    throw new DomainError(
      'FORBIDDEN',
      `${what} exist in the sandbox only: this is a production key, and production runs on the wall clock.`,
    );
  return principal;
}

const isSandboxPrincipal = (principal: Principal): principal is SandboxPrincipal => principal.environment === 'sandbox';
