import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer, { type Transporter } from 'nodemailer';
import type { NotificationMail, Notifier } from './interface.js';

/**
 * Development and tests: each message is written as an .eml file (the MIME message an SMTP server
 * would get) in `dir`, named after its Message-ID, so that a retry rewrites the same file.
 */
export class LogNotifier implements Notifier {
  readonly name = 'log';
  private readonly composer: Transporter;

  constructor(
    private readonly dir: string,
    private readonly from: string,
  ) {
    this.composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  }

  async send(mail: NotificationMail): Promise<void> {
    const info = (await this.composer.sendMail({ ...mail, from: this.from })) as { message: Buffer };
    await mkdir(this.dir, { recursive: true });
    const file = path.join(this.dir, `${mail.messageId.replace(/[^\w.@-]/g, '_')}.eml`);
    // Whole or not at all: a reader never sees half a message.
    await writeFile(`${file}.tmp`, info.message);
    await rename(`${file}.tmp`, file);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
