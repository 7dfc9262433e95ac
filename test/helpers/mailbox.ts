import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { waitUntil } from './wait.js';

export interface ReceivedMail {
  to: string;
  subject: string;
  text: string;
}

/** A real SMTP server on a free local port: the gateway sends to it as it would to any mail server. */
export class Mailbox {
  readonly messages: ReceivedMail[] = [];
  private server: SMTPServer | undefined;
  url = '';

  async start(): Promise<this> {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData: (stream, _session, callback) => {
        simpleParser(stream)
          .then((mail: ParsedMail) => {
            const to = Array.isArray(mail.to) ? mail.to.flatMap((a) => a.value) : (mail.to?.value ?? []);
            for (const address of to)
              this.messages.push({ to: address.address ?? '', subject: mail.subject ?? '', text: mail.text ?? '' });
            callback();
          })
          .catch(callback);
      },
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const port = (this.server.server.address() as { port: number }).port;
    this.url = `smtp://127.0.0.1:${port}`;
    return this;
  }

  /** Waits for a message to `to` whose subject matches, and returns it. */
  async waitFor(to: string, subject: RegExp, timeoutMs = 10_000): Promise<ReceivedMail> {
    let found: ReceivedMail | undefined;
    await waitUntil(
      () =>
        (found = this.messages.find((m) => m.to.toLowerCase() === to.toLowerCase() && subject.test(m.subject))) !==
        undefined,
      timeoutMs,
    );
    return found!;
  }

  /** The path and query of the first link in a message, to follow on whatever port the test serves. */
  static linkIn(mail: ReceivedMail): string {
    const match = mail.text.match(/https?:\/\/\S+/);
    if (!match) throw new Error(`No link in mail: ${mail.text}`);
    const url = new URL(match[0]);
    return url.pathname + url.search;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
