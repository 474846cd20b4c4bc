// Outgoing mail of the portal (password reset links), through nodemailer's SMTP transport: the
// de-facto SMTP client of Node (STARTTLS, auth, pooling), instead of speaking SMTP by hand.
import { createTransport } from 'nodemailer';
import type { SmtpSettings } from '../config/schema.ts';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/** The port: what the portal needs to send one mail. */
export interface Mailer {
  send(mail: Mail): Promise<void>;
}

export function smtpMailer(settings: SmtpSettings): Mailer {
  const transport = createTransport(settings.url());
  return {
    async send(mail) {
      await transport.sendMail({ from: settings.from, to: mail.to, subject: mail.subject, text: mail.text });
    },
  };
}
