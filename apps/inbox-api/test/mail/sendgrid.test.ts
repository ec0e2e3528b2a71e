import { UpstreamError } from '@repo/errors';
import { SendGridTransport } from '../../src/adapters/mail/sendgrid.js';
import { ALL_BYTES, closedPort, replyMail, startProvider } from './helpers.js';

const API_KEY = 'SG.test-key.abcdefghijklmnopqrstuvwxyz';

function transport(baseUrl: string) {
  return new SendGridTransport({ apiKey: API_KEY, baseUrl, timeoutMs: 5_000 });
}

describe('SendGridTransport', () => {
  it('posts the Mail Send JSON with a bearer key and the threading headers', async () => {
    const sendgrid = await startProvider(() => ({ status: 202, headers: { 'x-message-id': 'sg-internal-id' } }));
    const sent = await transport(sendgrid.url).send(replyMail());
    await sendgrid.close();

    // The X-Message-Id its Event Webhook's sg_message_id starts with.
    expect(sent).toEqual({ messageId: '<msg-2@inbox.example.com>', transportMessageId: 'sg-internal-id' });
    const [request] = sendgrid.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/v3/mail/send' });
    expect(request!.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request!.body.toString())).toEqual({
      personalizations: [
        {
          to: [{ email: 'zoe@example.org', name: 'Zoë Müller' }, { email: 'bob@example.net' }],
          cc: [{ email: 'carol@example.com' }],
          bcc: [{ email: 'audit@example.com' }],
        },
      ],
      from: { email: 'agent@inbox.example.com', name: 'Support Agent' },
      reply_to: { email: 'replies@inbox.example.com' },
      subject: 'Re: Angebot für März ✓',
      content: [
        { type: 'text/plain', value: 'Hello Zoë,\n\nthe offer is attached.' },
        { type: 'text/html', value: '<p>Hello Zoë,</p>\n<p>the offer is <strong>attached</strong>.</p>\n' },
      ],
      attachments: [
        {
          content: ALL_BYTES.toString('base64'),
          type: 'application/octet-stream',
          filename: 'bytes.bin',
          disposition: 'attachment',
        },
        {
          content: Buffer.from('%PDF-1.7 test').toString('base64'),
          type: 'application/pdf',
          filename: 'Übersicht März.pdf',
          disposition: 'attachment',
        },
      ],
      headers: {
        'Message-ID': '<msg-2@inbox.example.com>',
        'In-Reply-To': '<orig-1@example.org>',
        References: '<root-0@example.org> <orig-1@example.org>',
      },
    });
  });

  it('leaves out what SendGrid refuses: repeated addresses, empty lists and an empty body', async () => {
    const sendgrid = await startProvider(() => ({ status: 202 }));
    await transport(sendgrid.url).send(
      replyMail({
        to: ['a@example.com'],
        cc: ['A@example.com', 'b@example.com'],
        bcc: [],
        replyTo: ['r1@example.com', '"Second" <r2@example.com>'],
        text: '',
        html: '',
        inReplyTo: undefined,
        references: undefined,
        attachments: [],
      }),
    );
    await sendgrid.close();

    const body = JSON.parse(sendgrid.requests[0]!.body.toString());
    expect(body.personalizations).toEqual([{ to: [{ email: 'a@example.com' }], cc: [{ email: 'b@example.com' }] }]);
    expect(body.reply_to_list).toEqual([{ email: 'r1@example.com' }, { email: 'r2@example.com', name: 'Second' }]);
    expect(body.reply_to).toBeUndefined();
    expect(body.content).toEqual([{ type: 'text/plain', value: ' ' }]);
    expect(body.attachments).toBeUndefined();
    expect(body.headers).toEqual({ 'Message-ID': '<msg-2@inbox.example.com>' });
  });

  it.each([
    [
      401,
      { errors: [{ field: null, message: 'The provided authorization grant is invalid, expired, or revoked', help: null }] },
      'SendGrid answered 401: The provided authorization grant is invalid, expired, or revoked',
    ],
    [
      400,
      {
        errors: [
          { message: 'The from address does not match a verified Sender Identity.', field: 'from', help: null },
          { message: 'The subject is required.', field: 'subject', help: null },
        ],
      },
      'SendGrid answered 400: The from address does not match a verified Sender Identity.; The subject is required.',
    ],
    [500, 'upstream connect error', 'SendGrid answered 500: upstream connect error'],
  ])('turns a %i answer into provider_error with SendGrid’s reason', async (status, body, message) => {
    const sendgrid = await startProvider(() => ({ status, body }));
    const failure = await transport(sendgrid.url)
      .send(replyMail())
      .catch((error: unknown) => error);
    await sendgrid.close();

    expect(failure).toBeInstanceOf(UpstreamError);
    expect(failure).toMatchObject({ code: 'provider_error', message, details: { provider: 'SendGrid', status } });
  });

  it('reports a refused connection', async () => {
    await expect(transport(`http://127.0.0.1:${await closedPort()}`).send(replyMail())).rejects.toMatchObject({
      code: 'provider_error',
      message: 'SendGrid could not be reached: ECONNREFUSED',
    });
  });
});
