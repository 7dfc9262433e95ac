import { describe, expect, it } from 'vitest';
import { type MailMessage, SmtpMailer } from '../../src/domain/accounts/mailer.js';
import { Mailbox } from '../helpers/mailbox.js';

describe('account mail', () => {
  const message: MailMessage = {
    to: 'ada@example.test',
    subject: 'Hello',
    text: 'Open https://gateway.example/verify-email?token=abc\n',
  };

  it('sends over SMTP, and in development writes each message to the log as well', async () => {
    const mailbox = await new Mailbox().start();
    const logged: MailMessage[] = [];
    try {
      const mailer = new SmtpMailer({
        smtpUrl: mailbox.url,
        from: 'Gateway <no-reply@example.test>',
        logMessages: true,
        log: (m) => logged.push(m),
      });
      await mailer.send(message);
      const received = await mailbox.waitFor('ada@example.test', /Hello/);
      expect(Mailbox.linkIn(received)).toBe('/verify-email?token=abc');
      expect(logged).toEqual([message]);
    } finally {
      await mailbox.stop();
    }
  });

  it('only logs in development without SMTP, and refuses in production without SMTP', async () => {
    const logged: MailMessage[] = [];
    const development = new SmtpMailer({
      smtpUrl: undefined,
      from: 'x <x@x.test>',
      logMessages: true,
      log: (m) => logged.push(m),
    });
    await development.send(message);
    expect(logged).toHaveLength(1);
    const production = new SmtpMailer({
      smtpUrl: undefined,
      from: 'x <x@x.test>',
      logMessages: false,
      log: (m) => logged.push(m),
    });
    expect(production.canDeliver).toBe(false);
    await expect(production.send(message)).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(logged).toHaveLength(1);
  });
});
