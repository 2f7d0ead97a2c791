// Mails to members (issue 34): invitations and password links, through the operator's SMTP server
// (SMTP_URL), the same server e-mail callbacks use. Sending never throws: a refusal comes back as
// its reason, and the link is then shown to whoever asked instead (the inviter).
import nodemailer from 'nodemailer';

export interface Notice {
  to: string;
  subject: string;
  text: string;
}

/** Sends a notice: null when the SMTP server accepted it, else why not. */
export type SendNotice = (notice: Notice) => Promise<string | null>;

/** The sender of notices, or null without SMTP_URL (the links are shown instead). */
export function createNoticeMailer(smtpUrl: string | undefined, options: { from: string; timeoutMs: number }): SendNotice | null {
  if (!smtpUrl) return null;
  const transport = nodemailer.createTransport({
    url: smtpUrl,
    connectionTimeout: options.timeoutMs,
    greetingTimeout: options.timeoutMs,
    socketTimeout: options.timeoutMs,
    dnsTimeout: options.timeoutMs,
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return async ({ to, subject, text }) => {
    try {
      await transport.sendMail({ from: options.from, to, subject, text });
      return null;
    } catch (err) {
      const e = err as { message?: string; code?: string };
      return `${(e.message ?? String(err)).replace(/\s+/g, ' ').trim()}${e.code ? ` (${e.code})` : ''}`.slice(0, 1000);
    }
  };
}
