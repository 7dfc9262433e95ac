import type { Transporter } from 'nodemailer';
import { DomainError } from '../errors.js';
import { lazyLoad } from '../lazy-load.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  /** False when nothing could reach a person: flows that depend on mail refuse up front. */
  readonly canDeliver: boolean;
  send(message: MailMessage): Promise<void>;
}

export interface MailerOptions {
  /** smtp:// or smtps:// URL, with credentials if the server wants them. Unset: nothing is sent. */
  smtpUrl: string | undefined;
  from: string;
  /** Development: every message is also written to the log, so links work without a mail server. */
  logMessages: boolean;
  log: (message: MailMessage) => void;
}

/**
 * Mail over SMTP with nodemailer. Without SMTP configured, only development can go on (log only).
 * nodemailer (0.6 MB) loads with the first message, not with the server: most starts send none.
 */
export class SmtpMailer implements Mailer {
  private readonly transport = lazyLoad(async (): Promise<Transporter> => {
    const { default: nodemailer } = await import('nodemailer');
    return nodemailer.createTransport(this.options.smtpUrl!);
  });

  constructor(private readonly options: MailerOptions) {}

  get canDeliver(): boolean {
    return Boolean(this.options.smtpUrl) || this.options.logMessages;
  }

  async send(message: MailMessage): Promise<void> {
    if (!this.canDeliver) throw new DomainError('SERVICE_UNAVAILABLE', 'Mail is not configured (SMTP_URL is unset).');
    if (this.options.logMessages) this.options.log(message);
    if (!this.options.smtpUrl) return;
    await (await this.transport()).sendMail({ from: this.options.from, ...message });
  }
}
