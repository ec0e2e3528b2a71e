import { execFileSync } from 'node:child_process';
import { createSign } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import type { Express } from 'express';
import { type InboundMail, type StorableMail, storableMail } from '../../src/messages/inbound-mail.js';
import { appRoot } from '../../src/paths.js';
import { stringToSign, type SnsEnvelope } from '../../src/webhooks/sns.js';

const FIXTURES = path.join(appRoot, 'test', 'fixtures');

/** A fixture file under test/fixtures/ (inbound/…, replies/…). */
export function fixture(relative: string): Buffer {
  return readFileSync(path.join(FIXTURES, relative));
}

/** A multipart fixture as SendGrid sends it: CRLF line ends, boundary from the first line. */
export function multipartFixture(relative: string): { body: Buffer; contentType: string } {
  const text = fixture(relative).toString('latin1').replace(/\r?\n/g, '\r\n');
  const boundary = text.slice(2, text.indexOf('\r\n'));
  return { body: Buffer.from(text, 'latin1'), contentType: `multipart/form-data; boundary=${boundary}` };
}

/**
 * An SNS notification of an SES receipt (a fixture), addressed to `recipient` instead: the
 * receipt's recipients, the mail's destination and the To header of its content are rewritten.
 */
export function sesFixtureFor(name: string, recipient: string): SnsEnvelope {
  const envelope = JSON.parse(fixture(`inbound/ses-sns/${name}`).toString('utf8')) as SnsEnvelope;
  const notification = JSON.parse(envelope.Message) as {
    mail: { destination: string[] };
    receipt?: { recipients: string[] };
    content?: string;
  };
  const original = notification.receipt?.recipients[0] ?? notification.mail.destination[0]!;
  notification.mail.destination = [recipient];
  if (notification.receipt) notification.receipt.recipients = [recipient];
  if (notification.content) notification.content = notification.content.replaceAll(original, recipient);
  return { ...envelope, Message: JSON.stringify(notification) };
}

/** An SNS notification carrying an SES receipt with `raw` as its content. */
export function sesNotification(
  raw: string | Buffer,
  options: { recipients: string[]; encoding?: 'UTF8' | 'BASE64'; receipt?: object },
): SnsEnvelope {
  const encoding = options.encoding ?? 'UTF8';
  const content = encoding === 'BASE64' ? Buffer.from(raw).toString('base64') : Buffer.from(raw).toString('utf8');
  return {
    Type: 'Notification',
    MessageId: crypto.randomUUID(),
    TopicArn: 'arn:aws:sns:us-east-1:123456789012:inbound',
    Subject: 'Amazon SES Email Receipt Notification',
    Timestamp: new Date().toISOString(),
    Message: JSON.stringify({
      notificationType: 'Received',
      mail: { messageId: crypto.randomUUID(), destination: options.recipients },
      receipt: {
        recipients: options.recipients,
        spamVerdict: { status: 'PASS' },
        virusVerdict: { status: 'PASS' },
        spfVerdict: { status: 'PASS' },
        dkimVerdict: { status: 'PASS' },
        dmarcVerdict: { status: 'PASS' },
        action: { type: 'SNS', topicArn: 'arn:aws:sns:us-east-1:123456789012:inbound', encoding },
        ...options.receipt,
      },
      content,
    }),
  };
}

/** POSTs an SNS envelope as SNS does: JSON in a text/plain body. */
export function postSns(app: Express, envelope: object, path: '/webhooks/ses' | '/webhooks/ses/events' = '/webhooks/ses') {
  return request(app)
    .post(path)
    .set('content-type', 'text/plain; charset=UTF-8')
    .set('x-amz-sns-message-type', (envelope as SnsEnvelope).Type)
    .send(JSON.stringify(envelope));
}

/**
 * A self-signed certificate and its key, made with the machine's openssl, standing in for SNS's
 * signing certificate: subject CN=sns.amazonaws.com as AWS's carry, unless `names` says otherwise
 * (`subject`, and DNS names for a subjectAltName extension).
 */
export function signingCertificate(names: { subject?: string; dnsNames?: string[] } = {}): {
  certificate: string;
  privateKey: string;
} {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sns-cert-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        'key.pem',
        '-out',
        'cert.pem',
        '-days',
        '1',
        '-subj',
        names.subject ?? '/CN=sns.amazonaws.com',
        ...(names.dnsNames ? ['-addext', `subjectAltName=${names.dnsNames.map((name) => `DNS:${name}`).join(',')}`] : []),
      ],
      { cwd: dir, stdio: 'ignore' },
    );
    return {
      certificate: readFileSync(path.join(dir, 'cert.pem'), 'utf8'),
      privateKey: readFileSync(path.join(dir, 'key.pem'), 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The envelope signed as SNS signs it (SignatureVersion 1: SHA1withRSA, 2: SHA256withRSA). */
export function signSns(
  envelope: SnsEnvelope,
  options: { privateKey: string; certUrl: string; version: '1' | '2' },
): SnsEnvelope {
  const unsigned = { ...envelope, SignatureVersion: options.version, SigningCertURL: options.certUrl };
  const signer = createSign(options.version === '1' ? 'RSA-SHA1' : 'RSA-SHA256');
  signer.update(stringToSign(unsigned), 'utf8');
  return { ...unsigned, Signature: signer.sign(options.privateKey, 'base64') };
}

/** Mail as a provider module hands it over, for tests that receive it without a webhook. */
export function inboundMail(fields: Partial<InboundMail> = {}): InboundMail {
  return {
    from: 'sender@example.com',
    to: ['agent@inbox.test'],
    cc: [],
    replyTo: [],
    subject: 'Hello',
    text: 'Hi',
    html: '',
    size: 2,
    attachments: [],
    ...fields,
  };
}

/** That mail as ingest.ts makes it storable (domain inbox.test, received now), for receiveMessage. */
export function storableInboundMail(fields: Partial<InboundMail> = {}): Promise<StorableMail> {
  return storableMail(inboundMail(fields), { domain: 'inbox.test', receivedAt: new Date() });
}

export interface MimeFields {
  from?: string;
  to: string;
  cc?: string;
  subject: string;
  messageId?: string;
  inReplyTo?: string;
  references?: string;
  date?: string;
  body: string;
  contentType?: string;
  extraHeaders?: string[];
}

/** A simple MIME message, for tests that need one of their own. */
export function mimeMessage(fields: MimeFields): string {
  return [
    `From: ${fields.from ?? 'Bob <bob@example.com>'}`,
    `To: ${fields.to}`,
    ...(fields.cc ? [`Cc: ${fields.cc}`] : []),
    `Subject: ${fields.subject}`,
    ...(fields.messageId ? [`Message-ID: ${fields.messageId}`] : []),
    ...(fields.inReplyTo ? [`In-Reply-To: ${fields.inReplyTo}`] : []),
    ...(fields.references ? [`References: ${fields.references}`] : []),
    `Date: ${fields.date ?? new Date().toUTCString()}`,
    'MIME-Version: 1.0',
    `Content-Type: ${fields.contentType ?? 'text/plain; charset=utf-8'}`,
    ...(fields.extraHeaders ?? []),
    '',
    fields.body,
  ].join('\r\n');
}

/**
 * A TCP socket listening on 127.0.0.1 that counts the connections made to it (and closes them):
 * where a request must never go, the count stays 0.
 */
export async function startListener() {
  let connections = 0;
  const server = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
