/**
 * Thread summaries end to end: messages queue a pg-boss job in the transaction that records them,
 * the worker writes the summary with the language model (an OpenAI-compatible loopback server that
 * checks the request), a burst makes one call, a failing model is retried without slowing sends,
 * and pg-boss runs on the embedded database too. Sharp edge: the worker polls every 2 s, so each
 * wait below allows for a poll after the 1 s debounce.
 */
import request from 'supertest';
import { createEmbeddedTestContext, createTestContext, type EmbeddedTestContext, type TestContext } from './context.js';
import { summarizeThread } from '../src/summaries/service.js';
import { type ReceivedRequest, startProvider } from './mail/helpers.js';

type Provider = Awaited<ReturnType<typeof startProvider>>;
type App = TestContext['app'];

/** An OpenAI-compatible server that numbers its summaries, failing the first `failures` requests with 503. */
async function startModel(options: { failures?: number } = {}) {
  let failures = options.failures ?? 0;
  let written = 0;
  return startProvider((received) => {
    const body = JSON.parse(received.body.toString('utf8')) as { model?: string; messages?: unknown[] };
    if (received.path !== '/v1/chat/completions' || body.model !== 'test-model' || body.messages?.length !== 2) {
      return { status: 400, body: { error: { message: 'not a chat completion request' } } };
    }
    if (failures > 0) {
      failures -= 1;
      return { status: 503, body: { error: { message: 'overloaded', type: 'server_error' } } };
    }
    written += 1;
    return { status: 200, body: { choices: [{ index: 0, message: { role: 'assistant', content: `Summary ${written}.` } }] } };
  });
}

const llmEnv = (model: Provider) => ({
  LLM_PROVIDER: 'openai',
  LLM_BASE_URL: `${model.url}/v1`,
  LLM_MODEL: 'test-model',
  INBOX_SUMMARY_DEBOUNCE_SECONDS: '1',
});

const promptOf = (received: ReceivedRequest) =>
  (JSON.parse(received.body.toString('utf8')) as { messages: { content: string }[] }).messages[1]!.content;

async function startThread(app: App, username: string, bodies: string[]): Promise<string> {
  const inbox = (await request(app).post('/v1/inboxes').send({ name: username, email_username: username }).expect(201)).body;
  let threadId: string | undefined;
  for (const body of bodies) {
    const sent = await request(app)
      .post('/v1/messages')
      .send({ inbox_id: inbox.id, to: ['alex@example.com'], subject: 'Quarterly report', body, reply_to_thread_id: threadId })
      .expect(201);
    threadId = sent.body.thread_id as string;
  }
  return threadId!;
}

/** Inbound mail through the Mailgun webhook (unsigned in tests): recorded on pg's own transaction, with its summary job. */
async function receiveMail(app: App, username: string, attachment?: string): Promise<string> {
  const inbox = (await request(app).post('/v1/inboxes').send({ name: username, email_username: username }).expect(201)).body;
  const post = request(app)
    .post('/webhooks/mailgun')
    .field('recipient', inbox.email_address)
    .field('from', 'Alex <alex@example.com>')
    .field('subject', 'Inbound report')
    .field('body-plain', 'The inbound numbers.')
    .field('Message-Id', `<${username}@example.com>`);
  if (attachment) post.attach('attachment-1', Buffer.from(attachment), 'notes.txt');
  const answer = (await post.expect(200)).body as { messages: { thread_id: string }[] };
  return answer.messages[0]!.thread_id;
}

/** The thread's summary once it is `expected` (or any, when not given), or as it is after 20 s. */
async function summaryOf(app: App, threadId: string, expected?: string): Promise<string | null> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { summary } = (await request(app).get(`/v1/threads/${threadId}`).expect(200)).body as { summary: string | null };
    if ((summary !== null && (expected === undefined || summary === expected)) || Date.now() > deadline) return summary;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('with LLM_PROVIDER set', () => {
  let model: Provider;
  let ctx: TestContext;
  beforeAll(async () => {
    model = await startModel();
    ctx = await createTestContext(llmEnv(model));
    await ctx.deps.jobs.work(ctx.deps);
  });
  afterAll(async () => {
    await ctx.close();
    await model.close();
  });

  it('writes one summary for a burst of messages, from all of them, and a new one after the next message', async () => {
    const threadId = await startThread(ctx.app, 'burst', ['First: the numbers.', 'Second: the chart.', 'Third: the deadline.']);
    expect((await request(ctx.app).get(`/v1/threads/${threadId}`)).body.summary).toBeNull();

    expect(await summaryOf(ctx.app, threadId, 'Summary 1.')).toBe('Summary 1.');
    expect(model.requests).toHaveLength(1);
    const prompt = promptOf(model.requests[0]!);
    expect(prompt).toContain('Subject: Quarterly report');
    for (const text of ['First: the numbers.', 'Second: the chart.', 'Third: the deadline.']) expect(prompt).toContain(text);

    const { inboxId } = await ctx.db.thread.findUniqueOrThrow({ where: { id: threadId } });
    await request(ctx.app)
      .post('/v1/messages')
      .send({ inbox_id: inboxId, to: ['alex@example.com'], subject: 'Re', body: 'Fourth: done.', reply_to_thread_id: threadId })
      .expect(201);
    expect(await summaryOf(ctx.app, threadId, 'Summary 2.')).toBe('Summary 2.');
    expect(promptOf(model.requests[1]!)).toContain('Fourth: done.');
    // Each summary written is an event, committed with it, carrying the thread's list view.
    const events = (await request(ctx.app).get(`/v1/events?thread_id=${threadId}&types=thread.summarized`).expect(200)).body;
    expect(events.items.map((event: { data: { summary: string } }) => event.data.summary)).toEqual(['Summary 1.', 'Summary 2.']);
    expect(events.items[0]).toMatchObject({
      thread_id: threadId,
      inbox_id: inboxId,
      message_id: null,
      organization_id: 'default',
    });
  });

  it('lists the summary with the thread, and keeps threads apart', async () => {
    const first = await startThread(ctx.app, 'apart-a', ['About apples.']);
    const second = await startThread(ctx.app, 'apart-b', ['About pears.']);
    const [a, b] = [await summaryOf(ctx.app, first), await summaryOf(ctx.app, second)];
    expect([a, b].sort()).toEqual(['Summary 3.', 'Summary 4.']);
    const inboxId = (await ctx.db.thread.findUniqueOrThrow({ where: { id: first } })).inboxId;
    const listed = (await request(ctx.app).get(`/v1/threads?inbox_id=${inboxId}`).expect(200)).body.items as {
      summary: string;
    }[];
    expect(listed.map((thread) => thread.summary)).toEqual([a]);
  });

  it('reads a thread of 240 MB as its newest messages, each cut to its share, not whole into memory', async () => {
    const threadId = await receiveMail(ctx.app, 'huge-thread');
    // The mail's own summary job first: run during the call below, its prompt (of the mail alone) came first.
    expect(await summaryOf(ctx.app, threadId)).not.toBeNull();
    // 60 more messages of 4 MB each, written by SQL (a webhook would take minutes).
    await ctx.db.pool.query(
      `INSERT INTO messages (id, thread_id, inbox_id, direction, status, provider_message_id, subject, from_address,
          to_addresses, cc_addresses, bcc_addresses, reply_to_addresses, text, html, content_clean, preview, size,
          timestamp, created_at)
       SELECT gen_random_uuid(), m.thread_id, m.inbox_id, m.direction, m.status, '<huge-' || n || '@example.com>', m.subject,
              m.from_address, m.to_addresses, m.cc_addresses, m.bcc_addresses, m.reply_to_addresses, '', '',
              n || ' ' || repeat('x', 4 * 1024 * 1024), m.preview, m.size, m.timestamp, m.created_at + make_interval(secs => n)
         FROM messages m, generate_series(1, 60) AS n
        WHERE m.thread_id = $1`,
      [threadId],
    );
    const before = model.requests.length;
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 2);
    try {
      await summarizeThread(ctx.deps, threadId);
    } finally {
      clearInterval(sampler);
    }
    const prompt = promptOf(model.requests[before]!);
    expect(prompt.length).toBeLessThan(25_000);
    // The newest three fit (6,000 characters each, 24,000 in all): the other 58 are counted as left out.
    expect(prompt).toContain('(58 older messages left out)');
    expect(prompt).toContain(`60 ${'x'.repeat(5997)} […]`);
    // Reading each message whole took about 300 MB here.
    expect(Math.round((peak - baseline) / 1024 / 1024)).toBeLessThan(64);
  });
});

describe('inbound mail with LLM_PROVIDER set', () => {
  it('queues the summary in the transaction that records the mail, with and without attachments', async () => {
    const model = await startModel();
    const ctx = await createTestContext(llmEnv(model));
    try {
      await ctx.deps.jobs.work(ctx.deps);
      const plain = await receiveMail(ctx.app, 'inbound-plain');
      const withFile = await receiveMail(ctx.app, 'inbound-file', 'attached notes');
      expect([await summaryOf(ctx.app, plain), await summaryOf(ctx.app, withFile)].sort()).toEqual(['Summary 1.', 'Summary 2.']);
      for (const received of model.requests) expect(promptOf(received)).toContain('The inbound numbers.');
      expect(await ctx.db.attachment.count({ where: { threadId: withFile } })).toBe(1);
    } finally {
      await ctx.close();
      await model.close();
    }
  });
});

describe('a failing model', () => {
  it('never slows or fails a send; the job waits for a retry', async () => {
    const model = await startModel({ failures: 100 });
    const ctx = await createTestContext(llmEnv(model));
    try {
      await ctx.deps.jobs.work(ctx.deps);
      const threadId = await startThread(ctx.app, 'failing', ['Hello.']);
      const deadline = Date.now() + 20_000;
      let states: string[] = [];
      while (Date.now() < deadline) {
        const rows = await ctx.db.$queryRaw<{ state: string }[]>`
          SELECT state::text FROM pgboss.job WHERE name = 'summarize-thread' AND singleton_key = ${threadId}`;
        states = rows.map((row) => row.state);
        if (states.includes('retry')) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(states).toEqual(['retry']);
      expect(model.requests.length).toBeGreaterThanOrEqual(1);
      expect((await request(ctx.app).get(`/v1/threads/${threadId}`)).body.summary).toBeNull();
    } finally {
      await ctx.close();
      await model.close();
    }
  });
});

describe('with LLM_PROVIDER unset', () => {
  it('leaves summary null and never connects pg-boss', async () => {
    const ctx = await createTestContext();
    try {
      const threadId = await startThread(ctx.app, 'off', ['Hello.']);
      expect((await request(ctx.app).get(`/v1/threads/${threadId}`)).body.summary).toBeNull();
      const [schema] = await ctx.db.$queryRaw<{ exists: boolean }[]>`
        SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'pgboss') AS exists`;
      expect(schema!.exists).toBe(false);
    } finally {
      await ctx.close();
    }
  });
});

describe('on the embedded database (no DATABASE_URL)', () => {
  let model: Provider;
  let embedded: EmbeddedTestContext;
  beforeAll(async () => {
    model = await startModel();
    embedded = await createEmbeddedTestContext(llmEnv(model));
    await embedded.deps.jobs.work(embedded.deps);
  }, 120_000);
  afterAll(async () => {
    await embedded.close();
    await model.close();
  });

  it('runs the summary job through pg-boss on PGlite', async () => {
    const threadId = await startThread(embedded.app, 'embedded', ['Hello from PGlite.']);
    expect(await summaryOf(embedded.app, threadId, 'Summary 1.')).toBe('Summary 1.');
  });

  it('records inbound mail and its summary job on PGlite through pg directly', async () => {
    const threadId = await receiveMail(embedded.app, 'embedded-inbound', 'attached notes');
    expect(await summaryOf(embedded.app, threadId, 'Summary 2.')).toBe('Summary 2.');
  });
});
