/** One notification e-mail to one person: a plain-text and an HTML part of the same content. */
export interface NotificationMail {
  /** The Message-ID, without angle brackets: the same for every attempt to send the same notice. */
  messageId: string;
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** Sends the service's notification e-mails (approval requests and decisions). */
export interface Notifier {
  readonly name: NotifierName;
  /** Throws when the message was not accepted; the job that sends it retries. */
  send(mail: NotificationMail): Promise<void>;
  close(): Promise<void>;
}

export const NOTIFIER_NAMES = ['log', 'smtp'] as const;
export type NotifierName = (typeof NOTIFIER_NAMES)[number];
