import PostalMime from 'postal-mime';
import { UpstreamError } from '@repo/errors';
import { MailgunTransport } from '../../src/adapters/mail/mailgun.js';
import { ALL_BYTES, closedPort, replyMail, startProvider, startSilentServer } from './helpers.js';

const API_KEY = 'key-3ax6xnjp29jd6fds4gc373sgvjxteol0';
const DOMAIN = 'mg.example.com';

function transport(baseUrl: string, timeoutMs = 5_000) {
  return new MailgunTransport({ apiKey: API_KEY, domain: DOMAIN, baseUrl, timeoutMs });
}

describe('MailgunTransport', () => {
  it('posts our MIME to messages.mime with every recipient and basic auth', async () => {
    const mailgun = await startProvider(() => ({
      status: 200,
      body: { id: '<msg-2@inbox.example.com>', message: 'Queued. Thank you.' },
    }));
    const sent = await transport(mailgun.url).send(replyMail());
    await mailgun.close();

    // Its events name the message without the angle brackets.
    expect(sent).toEqual({ messageId: '<msg-2@inbox.example.com>', transportMessageId: 'msg-2@inbox.example.com' });
    const [request] = mailgun.requests;
    expect(request).toMatchObject({ method: 'POST', path: `/v3/${DOMAIN}/messages.mime` });
    expect(request!.headers.authorization).toBe(`Basic ${Buffer.from(`api:${API_KEY}`).toString('base64')}`);
    expect(request!.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);

    const form = await new Response(request!.body, { headers: { 'content-type': request!.headers['content-type']! } }).formData();
    expect(form.getAll('to')).toEqual(['zoe@example.org', 'bob@example.net', 'carol@example.com', 'audit@example.com']);
    const file = form.get('message') as File;
    expect(file.name).toBe('message.mime');
    const email = await PostalMime.parse(Buffer.from(await file.arrayBuffer()));
    expect(email.subject).toBe('Re: Angebot für März ✓');
    expect(email.messageId).toBe('<msg-2@inbox.example.com>');
    expect(email.inReplyTo).toBe('<orig-1@example.org>');
    expect(email.references).toBe('<root-0@example.org> <orig-1@example.org>');
    expect(email.bcc).toBeUndefined();
    expect(email.attachments.map((attachment) => attachment.filename)).toEqual(['bytes.bin', 'Übersicht März.pdf']);
    expect(Buffer.from(email.attachments[0]!.content as ArrayBuffer)).toEqual(ALL_BYTES);
  });

  it.each([
    [401, 'Forbidden', 'Mailgun answered 401: Forbidden'],
    [
      400,
      { message: "'to' parameter is not a valid address. please check documentation" },
      "Mailgun answered 400: 'to' parameter is not a valid address. please check documentation",
    ],
    [500, { message: 'Internal Server Error' }, 'Mailgun answered 500: Internal Server Error'],
  ])('turns a %i answer into provider_error with Mailgun’s reason', async (status, body, message) => {
    const mailgun = await startProvider(() => ({ status, body }));
    const failure = await transport(mailgun.url)
      .send(replyMail())
      .catch((error: unknown) => error);
    await mailgun.close();

    expect(failure).toBeInstanceOf(UpstreamError);
    expect(failure).toMatchObject({ code: 'provider_error', message, details: { provider: 'Mailgun', status } });
    expect(JSON.stringify(failure)).not.toContain(API_KEY);
  });

  describe('after a crash, asks the Events API whether Mailgun accepted the message', () => {
    it.each([
      [[{ event: 'accepted', message: { headers: { 'message-id': 'msg-2@inbox.example.com' } } }], 'sent'],
      [[], 'unknown'],
    ])('with %j events: %s', async (items, outcome) => {
      const mailgun = await startProvider(() => ({ status: 200, body: { items, paging: {} } }));
      const answer = await transport(mailgun.url).resolveInterrupted({ messageId: '<msg-2@inbox.example.com>' });
      await mailgun.close();

      expect(answer).toBe(outcome);
      const [request] = mailgun.requests;
      const url = new URL(request!.path, 'http://mailgun');
      expect({ method: request!.method, path: url.pathname }).toEqual({ method: 'GET', path: `/v3/${DOMAIN}/events` });
      expect(Object.fromEntries(url.searchParams)).toEqual({
        'message-id': 'msg-2@inbox.example.com',
        event: 'accepted',
        ascending: 'no',
        limit: '1',
      });
      expect(request!.headers.authorization).toBe(`Basic ${Buffer.from(`api:${API_KEY}`).toString('base64')}`);
    });

    it('throws when Mailgun cannot answer, rather than guess', async () => {
      const mailgun = await startProvider(() => ({ status: 503, body: { message: 'Service Unavailable' } }));
      await expect(transport(mailgun.url).resolveInterrupted({ messageId: '<m@x>' })).rejects.toMatchObject({
        code: 'provider_error',
      });
      await mailgun.close();
    });
  });

  it('reports a refused connection and a silent server', async () => {
    await expect(transport(`http://127.0.0.1:${await closedPort()}`).send(replyMail())).rejects.toMatchObject({
      code: 'provider_error',
      message: 'Mailgun could not be reached: ECONNREFUSED',
    });
    const silent = await startSilentServer();
    await expect(transport(silent.url, 200).send(replyMail())).rejects.toMatchObject({
      code: 'provider_error',
      message: 'Mailgun could not be reached: no answer within 200 ms',
    });
    await silent.close();
  });
});
