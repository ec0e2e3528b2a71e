import { createTestContext, type TestContext } from '../context.js';
import { as, createInbox, createOrganization, OPERATOR_KEY } from '../api-keys/helpers.js';
import { searchQuery } from '../../src/search/schemas.js';
import { search, windowStartFrom } from '../../src/search/service.js';

let ctx: TestContext;
let scope: { organizationId: string };
/** Every message's created_at, newest first: the window starts tried. */
let times: Date[];

const CANDIDATES = 4;
// Words in all, a third, a seventh and one of the messages; two words; a part of a word (the substring match).
const QUERIES = ['alpha', 'bravo', 'charlie', 'delta', 'bravo charlie', 'alph'];

beforeAll(async () => {
  ctx = await createTestContext({ INBOX_API_KEYS: OPERATOR_KEY, INBOX_RATE_LIMIT_PER_MINUTE: '0' });
  const operator = as(ctx.app, OPERATOR_KEY);
  const org = await createOrganization(ctx.app, 'Windows');
  scope = { organizationId: org.id };
  const inboxes = [
    await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'w1', organization_id: org.id }),
    await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'w2', organization_id: org.id }),
  ];
  for (let i = 0; i < 30; i++) {
    const words = ['alpha', i % 3 === 0 ? 'bravo' : '', i % 7 === 0 ? 'charlie' : '', i === 5 ? 'delta' : ''];
    await operator
      .post('/v1/messages', {
        inbox_id: inboxes[i % 2]!.id,
        to: ['partner@example.com'],
        subject: i % 4 === 0 ? `Message ${i} alpha` : `Message ${i}`,
        body: `Body ${i}: ${words.join(' ')} ${'alpha '.repeat(i % 5)}`,
      })
      .expect(201);
  }
  const rows = await ctx.db.$queryRaw<{ created_at: Date }[]>`
    SELECT DISTINCT created_at FROM message_search ORDER BY created_at DESC`;
  const newest = rows[0]!.created_at.getTime();
  times = [new Date(newest + 1000), ...rows.map((row) => row.created_at), new Date(0)];
});
afterAll(() => ctx.close());

const run = (q: string, windowStart: Date | null | undefined, extra: Record<string, string> = {}) =>
  search(ctx.db, scope, searchQuery.parse({ q, limit: '2', ...extra }), CANDIDATES, windowStart);

describe('search within a window of the newest messages', () => {
  it('answers as without the window, whatever its start: items, scores, totals, tokens', async () => {
    let windowed = 0;
    let fellBack = 0;
    for (const q of QUERIES) {
      const plain = await run(q, null);
      const offset = await run(q, null, { offset: '1' });
      for (const start of times) {
        expect(await run(q, start)).toEqual(plain);
        expect(await run(q, start, { offset: '1' })).toEqual(offset);
        const inWindow = await ctx.db.$queryRaw<{ n: number }[]>`
          SELECT count(*)::int AS n FROM message_search
           WHERE created_at > ${start} AND search_vector @@ websearch_to_tsquery('english', ${q})`;
        if (inWindow[0]!.n > CANDIDATES) windowed++;
        else fellBack++;
      }
    }
    // Both paths ran: windows holding more than the candidates, and too small ones that fell back.
    expect(windowed).toBeGreaterThan(10);
    expect(fellBack).toBeGreaterThan(10);
  });

  it('pages by token across the window start as without it', async () => {
    for (const q of ['alpha', 'bravo']) {
      for (const start of times) {
        let withWindow = await run(q, start);
        let without = await run(q, null);
        const seen = [...withWindow.items];
        while (without.next_page_token) {
          expect(withWindow.next_page_token).toBe(without.next_page_token);
          withWindow = await run(q, start, { page_token: without.next_page_token });
          without = await run(q, null, { page_token: without.next_page_token });
          expect(withWindow).toEqual(without);
          seen.push(...withWindow.items);
        }
        expect(withWindow.next_page_token).toBeNull();
        expect(new Set(seen.map((item) => item.id)).size).toBe(CANDIDATES);
      }
    }
  });

  it('estimates the window from the statistics without changing the answer', async () => {
    await ctx.db.$executeRaw`ANALYZE message_search`;
    for (const q of QUERIES) expect(await run(q, undefined)).toEqual(await run(q, null));
  });

  it('starts the window where the wanted matches likely lie, or not at all when it would be wide', () => {
    const bounds = Array.from({ length: 101 }, (_, i) => new Date(i * 1000));
    // A word in 1 % of 1,000,000 rows, 402 matches wanted: the newest 4.02 %, so the 5th bound from the newest.
    expect(windowStartFrom(bounds, 0.01, 1_000_000, 402)).toEqual(new Date(95_000));
    expect(windowStartFrom(bounds, 0.02, 1_000_000, 402)).toEqual(new Date(97_000));
    // Too rare (the window would hold a fifth of the rows), too common (found fast newest first), unknown.
    expect(windowStartFrom(bounds, 0.002, 1_000_000, 402)).toBeNull();
    expect(windowStartFrom(bounds, 0.086, 1_000_000, 402)).toBeNull();
    expect(windowStartFrom(bounds, 0, 1_000_000, 402)).toBeNull();
  });
});
