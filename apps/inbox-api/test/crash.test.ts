/**
 * kill -9 at each step of the writes that span two systems (the database and the stored files, the
 * database and the mail transport; a send, an inbox deletion, an inbound webhook), then a restart
 * on the same database and data folder: nothing
 * may be lost, duplicated or orphaned. The service runs as its own process (src/server.ts) and
 * kills itself with SIGKILL at the named step (TEST_CRASH_POINT); the transport is `local`, whose
 * deliveries land in another inbox of the same database, where the test can see them.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { LocalObjectStorage } from '@repo/storage';
import { MANY_ATTACHMENTS, readAttachment } from '../src/messages/attachments.js';
import { call, crashTestService } from './crash-service.js';

jest.setTimeout(180_000);

const crash = crashTestService({
  label: 'inbox_crash',
  domain: 'crash.test',
  // Short, so that the restarted service takes the dead one's sends for interrupted at once.
  env: { INBOX_SEND_LEASE_SECONDS: '1', INBOX_RECONCILE_INTERVAL_SECONDS: '1' },
});
const { start, crashDuring } = crash;

async function createInbox(baseUrl: string, username: string): Promise<{ id: string; email_address: string }> {
  const { status, body } = await call(baseUrl, 'POST', '/v1/inboxes', { name: username, email_username: username });
  expect(status).toBe(201);
  return body as { id: string; email_address: string };
}

/** Files under the object store: the stored objects, and (under .tmp) writes cut short. */
async function storedFiles(): Promise<string[]> {
  const root = path.join(crash.dataDir, 'objects');
  const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)));
}

/**
 * Waits until the reconciler has nothing left to do: no send in flight, no journaled object, no
 * inbox mid-delete, no partial write left in the store's temporary folder.
 */
async function settled(): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const [sending, pending, deleting, partial] = await Promise.all([
      crash.db.message.count({ where: { status: 'sending' } }),
      crash.db.pendingObject.count(),
      crash.db.inbox.count({ where: { deletedAt: { not: null } } }),
      storedFiles().then((files) => files.filter((file) => file.startsWith('.tmp')).length),
    ]);
    if (sending + pending + deleting + partial === 0) return;
    if (Date.now() > deadline) {
      throw new Error(`not settled: ${sending} sending, ${pending} pending, ${deleting} deleting, ${partial} partial writes`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** What must hold after any crash and restart, over the whole database and data folder. */
async function expectConsistent(): Promise<void> {
  // No file without a record, and no record without its file (inline ones have none); no partial write left.
  const keys = (await crash.db.attachment.findMany({ select: { storageKey: true } })).flatMap((row) => row.storageKey ?? []);
  expect((await storedFiles()).sort()).toEqual(keys.sort());
  // No message delivered (received by an inbox here from one of ours) without the sender's record of it, as sent.
  const received = await crash.db.message.findMany({
    where: { direction: 'inbound', providerMessageId: { endsWith: '@crash.test>' } },
    select: { providerMessageId: true },
  });
  for (const { providerMessageId } of received) {
    expect(
      await crash.db.message.findFirst({ where: { direction: 'outbound', providerMessageId }, select: { status: true } }),
    ).toEqual({
      status: 'sent',
    });
  }
  // No key left claimed without an outcome.
  expect(await crash.db.idempotencyKey.count({ where: { completedAt: null } })).toBe(0);
  // An event exactly for each change that committed: each received message, each send that ended
  // (events outlive the messages of deleted inboxes, by design).
  const events = await crash.db.event.findMany({ select: { type: true, messageId: true }, orderBy: { id: 'asc' } });
  const messages = await crash.db.message.findMany({ select: { id: true, status: true } });
  const typeOf: Record<string, string> = { received: 'message.received', sent: 'message.sent', failed: 'message.failed' };
  const eventsOf = new Map(messages.map((message) => [message.id, [] as string[]]));
  for (const event of events) eventsOf.get(event.messageId!)?.push(event.type);
  for (const message of messages) {
    const reported = eventsOf.get(message.id)!;
    // A send the reconciler gave up on (its lease, 1 s here, ran out on a loaded machine) and the transport then
    // delivered changed twice, failed and then sent (markSent: the transport's answer is the truth): both reported.
    const expected =
      message.status === 'sent' && reported.length === 2
        ? ['message.failed', 'message.sent']
        : message.status in typeOf
          ? [typeOf[message.status]]
          : [];
    expect({ message: message.id, reported }).toEqual({ message: message.id, reported: expected });
  }
}

describe.each(['send:attachments-stored', 'send:recorded', 'send:transport-done'])('kill -9 at %s', (point) => {
  it('is put right after a restart: one delivery at most, on record, and the same key then gives one result', async () => {
    const setup = await start();
    const tag = point.replace(/\W/g, '-');
    const sender = await createInbox(setup.url, `s-${tag}`);
    const recipient = await createInbox(setup.url, `r-${tag}`);
    await setup.stop();

    const send = (baseUrl: string) =>
      call(
        baseUrl,
        'POST',
        '/v1/messages',
        {
          inbox_id: sender.id,
          to: [recipient.email_address],
          subject: `Crash at ${point}`,
          body: 'Hello',
          // A mail of a few attachments: both are files, the small one too.
          attachments: [
            { filename: 'a.txt', content_type: 'text/plain', content: Buffer.from(point).toString('base64') },
            { filename: 'b.bin', content_type: 'application/octet-stream', content: LARGER_THAN_INLINE.toString('base64') },
          ],
        },
        { 'Idempotency-Key': `key-${tag}` },
      );
    await crashDuring(point, send);

    const restarted = await start();
    try {
      await settled();
      await expectConsistent();
      const delivered = () => crash.db.message.count({ where: { inboxId: recipient.id } });
      const recorded = await crash.db.message.findMany({ where: { inboxId: sender.id } });
      if (point === 'send:attachments-stored') {
        expect(recorded).toEqual([]);
      } else {
        expect(recorded.map((message) => message.status)).toEqual([point === 'send:recorded' ? 'failed' : 'sent']);
      }
      expect(await delivered()).toBe(point === 'send:transport-done' ? 1 : 0);

      // The client retries with its key: exactly one delivery in the end, and a retry of that answers the same.
      const retry = await send(restarted.url);
      expect(retry.status).toBe(201);
      expect(await delivered()).toBe(1);
      expect(await send(restarted.url)).toEqual(retry);
      await expectConsistent();
    } finally {
      await restarted.stop();
    }
  });
});

describe.each(['inbox-delete:marked', 'inbox-delete:files-removed'])('kill -9 at %s', (point) => {
  it('finishes the deletion after a restart: no row, event or file of the inbox', async () => {
    const setup = await start();
    const inbox = await createInbox(setup.url, `gone-${point.replace(/\W/g, '-')}`);
    const sent = await call(setup.url, 'POST', '/v1/messages', {
      inbox_id: inbox.id,
      to: ['someone@example.com'],
      subject: 's',
      body: 'b',
      attachments: [
        { filename: 'f.txt', content_type: 'text/plain', content: 'eA==' },
        { filename: 'g.bin', content_type: 'application/octet-stream', content: LARGER_THAN_INLINE.toString('base64') },
      ],
    });
    expect(sent.status).toBe(201);
    await setup.stop();
    // Its events carry its messages: they go with it (removeInbox).
    expect(await crash.db.event.count({ where: { inboxId: inbox.id } })).toBeGreaterThan(0);

    await crashDuring(point, (baseUrl) => call(baseUrl, 'DELETE', `/v1/inboxes/${inbox.id}`));
    const restarted = await start();
    try {
      expect((await call(restarted.url, 'GET', `/v1/inboxes/${inbox.id}`)).status).toBe(404);
      await settled();
      expect(await crash.db.inbox.count({ where: { id: inbox.id } })).toBe(0);
      expect(await crash.db.event.count({ where: { inboxId: inbox.id } })).toBe(0);
      expect((await storedFiles()).filter((file) => file.includes(inbox.id))).toEqual([]);
      await expectConsistent();
    } finally {
      await restarted.stop();
    }
  });
});

/** Over the default INBOX_INLINE_ATTACHMENT_BYTES (8 KiB): stored as a file, not in the record. */
const LARGER_THAN_INLINE = Buffer.alloc(12 * 1024, 'larger than inline ');
// Enough small parts that the mail keeps its small attachments in their records.
const NOTES = Array.from({ length: MANY_ATTACHMENTS }, (_, i) => `note-${String(i).padStart(2, '0')}.txt`);

/**
 * Inbound mail for `to`, its Message-ID and subject named after `label`, with two files, a small
 * one kept in its record and a larger one stored as a file, and the small notes that make it a
 * mail of many attachments.
 */
function mailWithFiles(to: string, label: string): string {
  return [
    'From: Bob <bob@example.com>',
    `To: ${to}`,
    `Subject: Inbound at ${label}`,
    `Message-ID: <inbound-${label.replace(/\W/g, '-')}@example.com>`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary=b',
    '',
    '--b',
    'Content-Type: text/plain',
    '',
    'See the file.',
    ...NOTES.flatMap((note) => [
      '--b',
      `Content-Type: text/plain; name="${note}"`,
      `Content-Disposition: attachment; filename="${note}"`,
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from(note).toString('base64'),
    ]),
    '--b',
    'Content-Type: application/octet-stream; name="data.bin"',
    'Content-Disposition: attachment; filename="data.bin"',
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.from(label).toString('base64'),
    '--b',
    'Content-Type: application/octet-stream; name="large.bin"',
    'Content-Disposition: attachment; filename="large.bin"',
    'Content-Transfer-Encoding: base64',
    '',
    LARGER_THAN_INLINE.toString('base64').replace(/.{76}/g, '$&\r\n'),
    '--b--',
    '',
  ].join('\r\n');
}

/** The two files of mailWithFiles, stored once: the small one in its record, the larger one as a file. */
async function expectMixedAttachments(inboxId: string, label: string): Promise<void> {
  const attachments = await crash.db.attachment.findMany({ where: { inboxId }, orderBy: { filename: 'asc' } });
  expect(attachments.map((attachment) => [attachment.filename, attachment.storageBackend])).toEqual([
    ['data.bin', 'inline'],
    ['large.bin', 'local'],
    ...NOTES.map((note) => [note, 'inline']),
  ]);
  const storage = new LocalObjectStorage(path.join(crash.dataDir, 'objects'));
  expect(await Promise.all(attachments.map((attachment) => readAttachment(storage, attachment)))).toEqual([
    Buffer.from(label),
    LARGER_THAN_INLINE,
    ...NOTES.map((note) => Buffer.from(note)),
  ]);
}

describe.each(['receive:attachments-stored', 'receive:recorded'])('kill -9 at %s of an inbound webhook', (point) => {
  it('stores nothing of the interrupted delivery, and the provider’s retry stores it exactly once', async () => {
    const setup = await start();
    const inbox = await createInbox(setup.url, `in-${point.replace(/\W/g, '-')}`);
    await setup.stop();
    const raw = mailWithFiles(inbox.email_address, point);
    const deliver = (baseUrl: string) =>
      fetch(`${baseUrl}/webhooks/mailgun`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ 'body-mime': raw, recipient: inbox.email_address }).toString(),
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as { messages: { duplicate: boolean }[] } }));
    await crashDuring(point, deliver);

    const restarted = await start();
    try {
      await settled();
      await expectConsistent();
      expect(await crash.db.message.count({ where: { inboxId: inbox.id } })).toBe(0);
      const retry = await deliver(restarted.url);
      expect(retry.status).toBe(200);
      expect(retry.body.messages[0]!.duplicate).toBe(false);
      expect((await deliver(restarted.url)).body.messages[0]!.duplicate).toBe(true);
      expect(await crash.db.message.count({ where: { inboxId: inbox.id } })).toBe(1);
      await expectMixedAttachments(inbox.id, point);
      await expectConsistent();
    } finally {
      await restarted.stop();
    }
  });
});

describe.each(['receive:attachments-stored', 'receive:recorded'])('kill -9 at %s of a signed Mailgun delivery', (point) => {
  it('takes Mailgun’s retry of the same signed request, stores the mail once, and refuses a replay after that', async () => {
    const signingKey = 'key-crash-signing';
    const signed = { MAILGUN_WEBHOOK_SIGNING_KEY: signingKey };
    const setup = await start(signed);
    const inbox = await createInbox(setup.url, `signed-${point.replace(/\W/g, '-')}`);
    await setup.stop();
    const timestamp = String(Math.floor(Date.now() / 1000));
    const token = randomBytes(25).toString('hex');
    const fields = new URLSearchParams({
      recipient: inbox.email_address,
      'body-mime': mailWithFiles(inbox.email_address, `signed ${point}`),
      timestamp,
      token,
      signature: createHmac('sha256', signingKey)
        .update(timestamp + token)
        .digest('hex'),
    }).toString();
    // The same signed request each time, as Mailgun retries it.
    const deliver = (baseUrl: string) =>
      fetch(`${baseUrl}/webhooks/mailgun`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: fields,
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> }));
    await crashDuring(point, deliver, signed);

    const restarted = await start(signed);
    try {
      await settled();
      expect(await crash.db.message.count({ where: { inboxId: inbox.id } })).toBe(0);
      const retry = await deliver(restarted.url);
      expect({ status: retry.status, messages: retry.body.messages }).toEqual({
        status: 200,
        messages: [expect.objectContaining({ inbox_id: inbox.id, duplicate: false })],
      });
      expect(await deliver(restarted.url)).toEqual({
        status: 401,
        body: { error: expect.objectContaining({ message: 'This Mailgun token was used before: the request is a replay' }) },
      });
      expect(await crash.db.message.count({ where: { inboxId: inbox.id } })).toBe(1);
      await expectMixedAttachments(inbox.id, `signed ${point}`);
      await expectConsistent();
    } finally {
      await restarted.stop();
    }
  });
});

describe('kill -9 between the copies of a signed Mailgun delivery for two inboxes', () => {
  it('takes Mailgun’s retry, which stores the copy still missing, and refuses the same token with other fields', async () => {
    const signingKey = 'key-crash-signing';
    const signed = { MAILGUN_WEBHOOK_SIGNING_KEY: signingKey };
    const setup = await start(signed);
    const inboxes = [await createInbox(setup.url, 'copies-first'), await createInbox(setup.url, 'copies-second')];
    await setup.stop();
    const timestamp = String(Math.floor(Date.now() / 1000));
    const token = randomBytes(25).toString('hex');
    const signature = createHmac('sha256', signingKey)
      .update(timestamp + token)
      .digest('hex');
    const recipient = inboxes.map((inbox) => inbox.email_address).join(', ');
    const fieldsOf = (subject: string) =>
      new URLSearchParams({
        recipient,
        'body-mime': mailWithFiles(recipient, subject),
        timestamp,
        token,
        signature,
      }).toString();
    const deliver = (baseUrl: string, fields = fieldsOf('two copies')) =>
      fetch(`${baseUrl}/webhooks/mailgun`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: fields,
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> }));
    // Killed once the first copy is committed, before the second.
    await crashDuring('ingest:copy-stored', (baseUrl) => deliver(baseUrl), signed);

    const restarted = await start(signed);
    try {
      await settled();
      const counts = () => Promise.all(inboxes.map((inbox) => crash.db.message.count({ where: { inboxId: inbox.id } })));
      expect(await counts()).toEqual([1, 0]);
      // A replay with other fields is refused while the request is unfinished, and stores nothing.
      expect((await deliver(restarted.url, fieldsOf('forged copies'))).status).toBe(401);
      const retry = await deliver(restarted.url);
      expect({ status: retry.status, messages: retry.body.messages }).toEqual({
        status: 200,
        messages: [
          expect.objectContaining({ inbox_id: inboxes[0]!.id, duplicate: true }),
          expect.objectContaining({ inbox_id: inboxes[1]!.id, duplicate: false }),
        ],
      });
      expect((await deliver(restarted.url)).status).toBe(401);
      expect(await counts()).toEqual([1, 1]);
      for (const inbox of inboxes) await expectMixedAttachments(inbox.id, 'two copies');
      await expectConsistent();
    } finally {
      await restarted.stop();
    }
  });
});

describe('kill -9 in the middle of a burst of sends', () => {
  it('leaves every send on record as sent (and delivered once) or failed (and not delivered), and every key retryable', async () => {
    const service = await start();
    const sender = await createInbox(service.url, 'burst-sender');
    const recipient = await createInbox(service.url, 'burst-recipient');
    const send = (baseUrl: string, i: number) =>
      call(
        baseUrl,
        'POST',
        '/v1/messages',
        {
          inbox_id: sender.id,
          to: [recipient.email_address],
          subject: `Burst ${i}`,
          body: 'x',
          attachments: [
            {
              filename: 'b.bin',
              content_type: 'application/octet-stream',
              content: Buffer.alloc(64 * 1024, i).toString('base64'),
            },
          ],
        },
        { 'Idempotency-Key': `burst-${i}` },
      );
    const exited = once(service.child, 'exit');
    const burst = Array.from({ length: 40 }, (_, i) => send(service.url, i).catch(() => undefined));
    await new Promise((resolve) => setTimeout(resolve, 150));
    service.child.kill('SIGKILL');
    await exited;
    await Promise.all(burst);

    const restarted = await start();
    try {
      await settled();
      await expectConsistent();
      // Every key, retried, ends in exactly one delivery of its message.
      // A 503 (no free connection in time, on a loaded machine) says to try again after its Retry-After (1 s), as a client does.
      const retried = async (i: number) => {
        for (let attempt = 0; ; attempt += 1) {
          const res = await send(restarted.url, i);
          if (res.status !== 503 || attempt === 4) return res;
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
      };
      const retries = await Promise.all(Array.from({ length: 40 }, (_, i) => retried(i)));
      expect(retries.map((res) => res.status)).toEqual(Array(40).fill(201));
      const subjects = (await crash.db.message.findMany({ where: { inboxId: recipient.id }, select: { subject: true } })).map(
        (message) => message.subject,
      );
      expect(subjects.sort()).toEqual(Array.from({ length: 40 }, (_, i) => `Burst ${i}`).sort());
      await expectConsistent();
    } finally {
      await restarted.stop();
    }
  });
});
