import type { UpstreamWebhookReceiver } from '../../src/domain/facade/inbound-webhooks.js';
import { accountOfUpstreamKey } from '../../src/facade/upstream-key-account.js';
import type { Services } from '../../src/services.js';

type Output = { json: unknown; text: string };

/** What the command was given: the upstream key proving the account, and what to set. */
export interface FacadeWebhookArgs {
  upstreamKey: string;
  secret: string | undefined;
  readKey: string | undefined;
}

/**
 * `facade-webhook --upstream-key <key> [--secret <secret>] [--read-key <key>]`: a facade's set-up
 * of one partner account's events (docs/facade.md#set-up-once-per-account), as the API and the
 * dashboard page do it. The account is the one the upstream says the key acts for (asked of its
 * `GET /api/v1/user/me`); without `--secret` the account's inbound URL and state are shown.
 */
export async function facadeWebhookCommand(services: Services, args: FacadeWebhookArgs): Promise<Output> {
  const principal = await accountOfUpstreamKey(services, args.upstreamKey);
  const inboundWebhooks = services.inboundWebhooks!;
  const receiver =
    args.secret === undefined
      ? await inboundWebhooks.receiver(principal)
      : await inboundWebhooks.register(principal, { secret: args.secret, readKey: args.readKey });
  return { json: receiver, text: describeReceiver(receiver) };
}

export function describeReceiver(receiver: UpstreamWebhookReceiver): string {
  return [
    `Inbound URL (register it upstream as the account's webhook URL): ${receiver.url}`,
    `Webhook secret: ${receiver.secretSetAt ? `set ${receiver.secretSetAt.toISOString()}` : 'not set (deliveries answer 404)'}`,
    `Gap-filling job: ${receiver.readKeySet ? 'read key set' : 'no read key (not run)'}${
      receiver.filledAt ? `, last listed ${receiver.filledAt.toISOString()}` : ''
    }`,
  ].join('\n');
}
