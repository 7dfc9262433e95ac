import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordEvent } from '../../src/domain/events/outbox.js';
import { stampEvents } from '../helpers/events.js';
import { startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { spawnTs } from '../helpers/child.js';
import { Receiver } from '../helpers/receiver.js';

describe('npm run listen', () => {
  let t: TestApp;
  let tenant: Tenant;
  let ws: string;
  beforeAll(async () => ({ t, tenant, wsUrl: ws } = await startTestApp({ listen: true })));
  afterAll(() => t.close());

  it('forwards each event to a local URL, signed, and prints a line per event', async () => {
    const receiver = await new Receiver().start();
    const listener = spawnTs('scripts/listen.ts', ['--forward-to', receiver.url, '--url', ws, '--after', '0'], {
      PGW_API_KEY: tenant.keys.READ_ONLY,
    });
    try {
      const [, secret] = await listener.waitFor(/Signing secret for this session \(verify with it\): (whsec_\S+)/);
      await listener.waitFor(/Forwarding events/);
      const event = await recordEvent(
        t.services.db,
        { type: 'payout.completed', userId: tenant.user.id, environment: 'sandbox', data: { reference: 'PO-9' } },
        new Date(),
      );
      await stampEvents(t.services.db, [event.id]);
      t.services.doorbell.ring();
      await receiver.waitFor(1);
      const request = receiver.received[0]!;
      expect(JSON.parse(request.body)).toMatchObject({
        id: event.id,
        type: 'payout.completed',
        data: { reference: 'PO-9' },
      });
      expect(new Webhook(secret!).verify(request.body, request.headers as Record<string, string>)).toMatchObject({
        id: event.id,
      });
      await listener.waitFor(new RegExp(`payout\\.completed\\s+${event.id}\\s+→ 200`));
    } finally {
      listener.process.kill('SIGTERM');
      await listener.exited;
      await receiver.stop();
    }
  });
});
