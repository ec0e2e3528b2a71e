import { setting } from '@repo/config';
import type { z } from 'zod';
import { NOTIFIER_NAMES } from './interface.js';

/** The notification e-mails' environment variables, to spread into the app's configuration schema. */
export function notificationSettings() {
  return {
    COLLAB_NOTIFIER: setting
      .oneOf(NOTIFIER_NAMES)
      .default('log')
      .describe(
        'How notification e-mails (approval requests and decisions) leave: `log` writes each as an .eml file under DATA_DIR/notifications and sends nothing; `smtp` sends through SMTP_URL.',
      ),
    SMTP_URL: setting
      .url({ protocols: ['smtp:', 'smtps:'] })
      .optional()
      .describe('SMTP server of the `smtp` notifier, with credentials, e.g. `smtps://user:password@smtp.example.com:465`.'),
    COLLAB_SMTP_TIMEOUT_SECONDS: setting
      .integer({ min: 1, max: 300 })
      .default(30)
      .describe(
        'How long connecting to the SMTP server, its greeting and each exchange may take before the send fails (and is retried).',
      ),
    COLLAB_MAIL_FROM: setting
      .string()
      .default('Collab <no-reply@collab.localhost>')
      .describe('The From of notification e-mails, e.g. `Collab <no-reply@example.com>`.'),
  };
}

export type NotificationSettings = z.output<z.ZodObject<ReturnType<typeof notificationSettings>>>;

/** For the app's `superRefine`: the `smtp` notifier needs its server. */
export function checkNotificationSettings(settings: NotificationSettings, ctx: z.RefinementCtx): void {
  if (settings.COLLAB_NOTIFIER === 'smtp' && settings.SMTP_URL === undefined) {
    ctx.addIssue({ code: 'custom', path: ['SMTP_URL'], message: 'is required when COLLAB_NOTIFIER is smtp' });
  }
}
