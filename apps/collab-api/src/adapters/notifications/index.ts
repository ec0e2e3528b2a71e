import path from 'node:path';
import type { Notifier } from './interface.js';
import { LogNotifier } from './log.js';
import type { NotificationSettings } from './settings.js';
import { SmtpNotifier } from './smtp.js';

export type { NotificationMail, Notifier, NotifierName } from './interface.js';
export { checkNotificationSettings, notificationSettings, type NotificationSettings } from './settings.js';

/** The configured notifier; `log` writes under `dataDir`/notifications. */
export function createNotifier(settings: NotificationSettings, options: { dataDir: string }): Notifier {
  if (settings.COLLAB_NOTIFIER === 'smtp') {
    return new SmtpNotifier(settings.SMTP_URL!, settings.COLLAB_MAIL_FROM, {
      timeoutMs: settings.COLLAB_SMTP_TIMEOUT_SECONDS * 1000,
    });
  }
  return new LogNotifier(path.join(options.dataDir, 'notifications'), settings.COLLAB_MAIL_FROM);
}
