import type { AddressInfo } from 'node:net';
import PostalMime, { type Email } from 'postal-mime';
import { SMTPServer } from 'smtp-server';
import { UpstreamError } from '@repo/errors';
import { SmtpTransport, smtpQueueId } from '../../src/adapters/mail/smtp.js';
import { ALL_BYTES, closedPort, replyMail } from './helpers.js';

interface Delivery {
  from: string;
  to: string[];
  raw: Buffer;
  user?: string;
}

let server: SMTPServer;
let port: number;
const deliveries: Delivery[] = [];

beforeAll(async () => {
  server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true, // plain connections on loopback only
    authOptional: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === 'agent' && auth.password === 's3cret p@ss') return callback(null, { user: auth.username });
      callback(new Error('Invalid username or password'));
    },
    onRcptTo(address, _session, callback) {
      if (address.address.endsWith('@blocked.example')) {
        return callback(Object.assign(new Error('5.7.1 Relaying denied'), { responseCode: 550 }));
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        deliveries.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((recipient) => recipient.address),
          raw: Buffer.concat(chunks),
          user: session.user as string | undefined,
        });
        callback(null, 'Ok: queued as 4BqD3x1XyZz');
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  deliveries.length = 0;
});

describe('SmtpTransport', () => {
  it('delivers one MIME message with every header, both bodies and the attachments byte for byte', async () => {
    const transport = new SmtpTransport(`smtp://127.0.0.1:${port}`, { timeoutMs: 5_000 });
    const sent = await transport.send(replyMail());
    await transport.close();

    // The queue id of the server's reply (Postfix's words).
    expect(sent).toEqual({ messageId: '<msg-2@inbox.example.com>', transportMessageId: '4BqD3x1XyZz' });
    expect(deliveries).toHaveLength(1);
    const [delivery] = deliveries as [Delivery];
    expect(delivery.from).toBe('agent@inbox.example.com');
    expect(delivery.to).toEqual(['zoe@example.org', 'bob@example.net', 'carol@example.com', 'audit@example.com']);

    const email: Email = await PostalMime.parse(delivery.raw);
    expect(email.from).toEqual({ name: 'Support Agent', address: 'agent@inbox.example.com' });
    expect(email.to).toEqual([
      { name: 'Zoë Müller', address: 'zoe@example.org' },
      { name: '', address: 'bob@example.net' },
    ]);
    expect(email.cc).toEqual([{ name: '', address: 'carol@example.com' }]);
    expect(email.bcc).toBeUndefined();
    expect(delivery.raw.toString('latin1')).not.toMatch(/^bcc:/im);
    expect(email.replyTo).toEqual([{ name: '', address: 'replies@inbox.example.com' }]);
    expect(email.subject).toBe('Re: Angebot für März ✓');
    expect(email.messageId).toBe('<msg-2@inbox.example.com>');
    expect(email.inReplyTo).toBe('<orig-1@example.org>');
    expect(email.references).toBe('<root-0@example.org> <orig-1@example.org>');
    // The parser reads the line break that ends a MIME part as part of the body.
    expect(email.text).toBe('Hello Zoë,\n\nthe offer is attached.\n');
    expect(email.html).toBe('<p>Hello Zoë,</p>\n<p>the offer is <strong>attached</strong>.</p>\n\n');
    expect(email.attachments.map(({ filename, mimeType, disposition }) => ({ filename, mimeType, disposition }))).toEqual([
      { filename: 'bytes.bin', mimeType: 'application/octet-stream', disposition: 'attachment' },
      { filename: 'Übersicht März.pdf', mimeType: 'application/pdf', disposition: 'attachment' },
    ]);
    expect(Buffer.from(email.attachments[0]!.content as ArrayBuffer)).toEqual(ALL_BYTES);
    expect(Buffer.from(email.attachments[1]!.content as ArrayBuffer).toString()).toBe('%PDF-1.7 test');
  });

  it('logs in with the credentials of the URL', async () => {
    const transport = new SmtpTransport(`smtp://agent:${encodeURIComponent('s3cret p@ss')}@127.0.0.1:${port}`, {
      timeoutMs: 5_000,
    });
    await transport.send(replyMail({ attachments: [] }));
    await transport.close();
    expect(deliveries.map((delivery) => delivery.user)).toEqual(['agent']);
  });

  it.each([
    [
      'a rejected recipient',
      () => `smtp://127.0.0.1:${port}`,
      { to: ['x@blocked.example'], cc: [], bcc: [] },
      /^SMTP failed: .*550 5\.7\.1 Relaying denied/,
    ],
    [
      'a failed login',
      () => `smtp://agent:wrong@127.0.0.1:${port}`,
      {},
      /^SMTP failed: Invalid login: 535 .*Invalid username or password/,
    ],
  ])('reports %s as provider_error with the server reply, never the password', async (_case, url, overrides, message) => {
    const transport = new SmtpTransport(url(), { timeoutMs: 5_000 });
    const failure = await transport.send(replyMail(overrides)).catch((error: unknown) => error);
    await transport.close();

    expect(failure).toBeInstanceOf(UpstreamError);
    expect(failure).toMatchObject({ code: 'provider_error', status: 502, details: { provider: 'smtp' } });
    expect((failure as Error).message).toMatch(message);
    expect((failure as Error).message).not.toContain('wrong');
  });

  it('reports a server that cannot be reached', async () => {
    const transport = new SmtpTransport(`smtp://127.0.0.1:${await closedPort()}`, { timeoutMs: 5_000 });
    const failure = transport.send(replyMail());
    await expect(failure).rejects.toMatchObject({ code: 'provider_error' });
    await expect(failure).rejects.toThrow(/^SMTP failed: .*ECONNREFUSED/);
    await transport.close();
  });
});

describe('smtpQueueId', () => {
  it.each([
    ['250 2.0.0 Ok: queued as 4BqD3x1XyZz', '4BqD3x1XyZz'],
    ['250 OK id=1rXyZ-000Abc-De', '1rXyZ-000Abc-De'],
    ['250 2.0.0 OK 1700000000 d2e1a72fcca58-5e5b7a4a1e1si123456pfh.5 - gsmtp', undefined],
    ['250 Message accepted <queued as <abc@host>>', 'abc@host'],
    [undefined, undefined],
  ])('reads %p as %p', (reply, id) => {
    expect(smtpQueueId(reply)).toBe(id);
  });
});
