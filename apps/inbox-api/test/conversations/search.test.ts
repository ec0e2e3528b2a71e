import { createTestContext, type TestContext } from '../context.js';
import { as, createInbox, createKey, createOrganization, OPERATOR_KEY } from '../api-keys/helpers.js';
import { searchQuery } from '../../src/search/schemas.js';
import { search as searchService } from '../../src/search/service.js';
import { renderEscapedSnippet, renderSnippet, START_MARK, STOP_MARK, substringSnippet } from '../../src/search/snippet.js';

let ctx: TestContext;
let operator: ReturnType<typeof as>;
let orgKey: string;
let inboxKey: string;
let one: { id: string; email_address: string };
let two: { id: string; email_address: string };
let foreign: { id: string; email_address: string };
let orgId: string;

interface Result {
  id: string;
  inbox_id: string;
  subject: string;
  score: number;
  snippet: string;
  labels: string[];
}
interface SearchPage {
  items: Result[];
  total: number;
  count: number;
  next_page_token: string | null;
}

beforeAll(async () => {
  ctx = await createTestContext({ INBOX_API_KEYS: OPERATOR_KEY, INBOX_RATE_LIMIT_PER_MINUTE: '0' });
  operator = as(ctx.app, OPERATOR_KEY);
  const org = await createOrganization(ctx.app, 'Searchers');
  orgId = org.id;
  const other = await createOrganization(ctx.app, 'Others');
  one = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'one', organization_id: org.id });
  two = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'two', organization_id: org.id });
  foreign = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'foreign', organization_id: other.id });
  orgKey = (await createKey(ctx.app, OPERATOR_KEY, { organization_id: org.id, permissions: ['read', 'send'] })).key;
  inboxKey = (await createKey(ctx.app, OPERATOR_KEY, { organization_id: org.id, inbox_ids: [one.id], permissions: ['read'] }))
    .key;
  const send = (inbox: { id: string }, subject: string, body: string, labels?: string[]) =>
    operator.post('/v1/messages', { inbox_id: inbox.id, to: ['partner@example.com'], subject, body, labels }).expect(201);
  await send(one, 'Invoice for March', 'Please find the invoice attached. The invoice is due in March.', ['billing']);
  await send(two, 'Lunch plans', 'Shall we discuss the invoice over lunch?');
  await send(two, 'Invoices, invoices', 'Every invoice of the quarter: invoice one, invoice two, invoice three.', ['billing']);
  await send(one, 'Weekly update', 'Nothing about money here. Contact carol.smith@partner-corp.example for details.');
  await send(one, 'Markup', 'Compare `<script>alert(1)</script>` & `<b>bold</b>` \uE000 for the invoice');
  await send(foreign, 'Foreign invoice', 'An invoice nobody else may see.');
});
afterAll(() => ctx.close());

async function search(key: string, query: string): Promise<SearchPage> {
  const res = await as(ctx.app, key).get(`/v1/search?${query}`);
  if (res.status !== 200) throw new Error(`${query}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

describe('GET /v1/search', () => {
  it('searches every inbox in the scope, ranked, with score and a marked snippet', async () => {
    const page = await search(orgKey, 'q=invoice');
    const subjects = page.items.map((item) => item.subject);
    expect(new Set(subjects)).toEqual(new Set(['Invoice for March', 'Lunch plans', 'Invoices, invoices', 'Markup']));
    expect(page.total).toBe(4);
    // Subject matches weigh more than a word in passing.
    expect(subjects.indexOf('Lunch plans')).toBe(3);
    const scores = page.items.map((item) => item.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(scores.every((score) => score > 0)).toBe(true);
    const march = page.items.find((item) => item.subject === 'Invoice for March')!;
    expect(march.snippet).toContain('<mark>invoice</mark>');
    expect(march.labels).toEqual(['sent', 'billing']);
    expect(new Set(page.items.map((item) => item.inbox_id))).toEqual(new Set([one.id, two.id]));
  });

  it('never lets message text inject markup into a snippet', async () => {
    const markup = (await search(orgKey, 'q=invoice')).items.find((item) => item.subject === 'Markup')!;
    expect(markup.snippet.replace(/<\/?mark>/g, '')).not.toMatch(/[<>]/);
    const { text } = (await operator.get(`/v1/messages/${markup.id}`).expect(200)).body as { text: string };
    expect(text).toContain('<script>');
    expect(markup.snippet).toContain('&lt;/script&gt;');
    expect(markup.snippet).toContain('&amp;');
    expect(markup.snippet).not.toContain('\uE000');
  });

  it('finds parts of words and addresses through the substring match', async () => {
    const partial = await search(orgKey, 'q=nvoic');
    expect(partial.total).toBe(4);
    const address = await search(orgKey, 'q=smith@partner-corp');
    expect(address.items.map((item) => item.subject)).toEqual(['Weekly update']);
    expect(address.items[0]!.snippet).toContain('<mark>smith@partner-corp</mark>');
    expect((await search(orgKey, 'q=%25')).total).toBe(0);
    expect((await search(orgKey, "q=x'%3B%20DROP%20TABLE%20messages%3B--")).total).toBe(0);
    expect((await search(orgKey, 'q=the')).total).toBeGreaterThan(0);
  });

  it('narrows by inboxes, labels and time; a limited key searches its inboxes only', async () => {
    expect((await search(orgKey, `q=invoice&inbox_ids=${two.id}`)).items.map((i) => i.subject).sort()).toEqual([
      'Invoices, invoices',
      'Lunch plans',
    ]);
    expect((await search(orgKey, `q=invoice&inbox_ids=${one.id},${two.id}&labels=billing`)).total).toBe(2);
    expect((await search(orgKey, `q=invoice&before=2000-01-01T00:00:00Z`)).total).toBe(0);
    expect((await search(orgKey, `q=invoice&after=2000-01-01T00:00:00Z`)).total).toBe(4);
    const limited = await search(inboxKey, 'q=invoice');
    expect(new Set(limited.items.map((item) => item.inbox_id))).toEqual(new Set([one.id]));
    const operatorPage = await search(OPERATOR_KEY, 'q=invoice&limit=200');
    expect(operatorPage.total).toBe(5);
  });

  it('pages by token without repeats, and by offset', async () => {
    const all = (await search(orgKey, 'q=invoice&limit=200')).items.map((item) => item.id);
    const seen: string[] = [];
    let token: string | null = null;
    do {
      const page: SearchPage = await search(orgKey, `q=invoice&limit=1${token ? `&page_token=${token}` : ''}`);
      seen.push(...page.items.map((item) => item.id));
      token = page.next_page_token;
    } while (token);
    expect(seen).toEqual(all);
    expect((await search(orgKey, 'q=invoice&limit=2&offset=2')).items.map((item) => item.id)).toEqual(all.slice(2));
  });

  it('ranks only the newest matches when too many match, says so, and pages that set stably', async () => {
    const scope = { organizationId: orgId };
    const all = await searchService(ctx.db, scope, searchQuery.parse({ q: 'invoice' }), 100);
    expect(all.total).toBe(4);
    expect(all.total_is_lower_bound).toBe(false);
    const newestFirst = [...all.items].sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id));
    const capped = await searchService(ctx.db, scope, searchQuery.parse({ q: 'invoice' }), 3);
    expect(capped.total).toBe(3);
    expect(capped.total_is_lower_bound).toBe(true);
    expect(new Set(capped.items.map((item) => item.id))).toEqual(new Set(newestFirst.slice(0, 3).map((item) => item.id)));
    // Page through the capped set one by one while a newer match arrives: nothing repeats or goes missing.
    const first = await searchService(ctx.db, scope, searchQuery.parse({ q: 'invoice', limit: '1' }), 3);
    const late = await operator
      .post('/v1/messages', { inbox_id: one.id, to: ['partner@example.com'], subject: 'Late invoice', body: 'An invoice.' })
      .expect(201);
    const seen = first.items.map((item) => item.id);
    let token = first.next_page_token;
    while (token) {
      const next = await searchService(ctx.db, scope, searchQuery.parse({ q: 'invoice', limit: '1', page_token: token }), 3);
      seen.push(...next.items.map((item) => item.id));
      token = next.next_page_token;
    }
    expect(new Set(seen).size).toBe(seen.length);
    for (const item of capped.items) expect(seen).toContain(item.id);
    expect(seen.filter((id) => id !== late.body.id)).toHaveLength(3);
    // Through HTTP: small result sets are counted exactly.
    expect((await as(ctx.app, orgKey).get('/v1/search?q=march').expect(200)).body.total_is_lower_bound).toBe(false);
  });

  it('answers 404 for inboxes out of reach and 400 for bad input', async () => {
    for (const query of [
      `q=invoice&inbox_ids=${foreign.id}`,
      `q=invoice&inbox_ids=${one.id},${foreign.id}`,
      'q=x&inbox_ids=nope',
    ]) {
      const res = await as(ctx.app, orgKey).get(`/v1/search?${query}`);
      expect({ query, status: res.status, code: res.body.error?.code }).toEqual({ query, status: 404, code: 'not_found' });
    }
    expect((await as(ctx.app, inboxKey).get(`/v1/search?q=x&inbox_ids=${two.id}`)).status).toBe(404);
    for (const query of [
      '',
      'q=',
      'q=%20%20',
      `q=${'x'.repeat(201)}`,
      'q=a%00b',
      'q=x&labels=%01',
      'q=x&after=soon',
      'q=x&page_token=nope',
      'q=x&inbox_ids=',
      'q=x&limit=0',
      'q=x&other=1',
    ]) {
      const res = await as(ctx.app, orgKey).get(`/v1/search?${query}`);
      expect({ query, status: res.status }).toEqual({ query, status: 400 });
    }
  });
});

describe('snippets', () => {
  it('escapes everything but the marks', () => {
    expect(renderSnippet(`a <b> & "c" 'd' ${START_MARK}hit${STOP_MARK}`)).toBe(
      'a &lt;b&gt; &amp; &quot;c&quot; &#39;d&#39; <mark>hit</mark>',
    );
  });

  it('keeps the entities of escaped text whole, escaping whatever else could open markup', () => {
    expect(renderEscapedSnippet(`&lt;b&gt; &amp; &#39; & <i> ${START_MARK}hit${STOP_MARK}`)).toBe(
      '&lt;b&gt; &amp; &#39; &amp; &lt;i&gt; <mark>hit</mark>',
    );
  });

  it('marks a substring match with some context, or shows the beginning', () => {
    // Text before the match whose lower case is longer (İ is two characters lower-cased) does not move the mark.
    expect(substringSnippet('İİİİİİİİİİ zzfooqq', 'fooq')).toBe('İİİİİİİİİİ zz<mark>fooq</mark>q');
    expect(substringSnippet('a (b) [c] $5.00 *x* a|b \\d', '$5.00 *x*')).toBe('a (b) [c] <mark>$5.00 *x*</mark> a|b \\d');
    expect(substringSnippet('Write to Carol.Smith@example.com <now>', 'smith@')).toBe(
      'Write to Carol.<mark>Smith@</mark>example.com &lt;now&gt;',
    );
    expect(substringSnippet(`${'x'.repeat(200)} needle ${'y'.repeat(200)}`, 'needle')).toMatch(
      /^… x+ <mark>needle<\/mark> y+ …$/,
    );
    expect(substringSnippet('no match here', 'zzz')).toBe('no match here');
    expect(substringSnippet(`forged ${START_MARK}<i>`, 'forged')).toBe('<mark>forged</mark> &lt;i&gt;');
  });
});
