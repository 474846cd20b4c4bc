// Outgoing mail of the portal (password reset links), through nodemailer's SMTP transport: the
// de-facto SMTP client of Node (STARTTLS, auth, pooling), instead of speaking SMTP by hand.
// nodemailer is imported on the first mail, not at start: it costs ~7 MB of RSS (measured in a
// fresh Node 24), and most gateways send none (BENCHMARKS.md "Production runtime").
import type { Transporter } from 'nodemailer';
import type { SmtpSettings } from '../config/secrets.ts';

interface Mail {
  to: string;
  subject: string;
  text: string;
}

/** The port: what the portal needs to send one mail. */
export interface Mailer {
  send(mail: Mail): Promise<void>;
}

export function smtpMailer(settings: SmtpSettings): Mailer {
  let transport: Promise<Transporter> | undefined;
  return {
    async send(mail) {
      transport ??= import('nodemailer').then(({ createTransport }) => createTransport(settings.url()));
      await (await transport).sendMail({ from: settings.from, to: mail.to, subject: mail.subject, text: mail.text });
    },
  };
}
