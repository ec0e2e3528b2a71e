import { createTestContext, type TestContext } from '../context.js';
import { as, createInbox, createKey, createOrganization, OPERATOR_KEY } from '../api-keys/helpers.js';
import { negationsTooDeep, searchQuery } from '../../src/search/schemas.js';
import { search as searchService } from '../../src/search/service.js';
import { renderEscapedSnippet, renderSnippet, resultSnippet, START_MARK, STOP_MARK } from '../../src/search/snippet.js';

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

  it('marks the subject in the snippet of a message that matches by its subject only', async () => {
    const page = await search(orgKey, 'q=weekly');
    expect(page.items.map((item) => [item.subject, item.snippet])).toEqual([['Weekly update', '<mark>Weekly</mark> update']]);
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

  it('pages exactly the set the first page ranked, whatever arrives between pages', async () => {
    const scope = { organizationId: orgId };
    const send = (subject: string, body: string) =>
      operator.post('/v1/messages', { inbox_id: two.id, to: ['partner@example.com'], subject, body }).expect(201);
    const walk = async (q: string, candidates: number, between?: () => Promise<unknown>) => {
      const pages = [await searchService(ctx.db, scope, searchQuery.parse({ q, limit: '1' }), candidates)];
      await between?.();
      while (pages.at(-1)!.next_page_token) {
        const query = searchQuery.parse({ q, limit: '1', page_token: pages.at(-1)!.next_page_token });
        pages.push(await searchService(ctx.db, scope, query, candidates));
      }
      return { pages, ids: pages.flatMap((page) => page.items.map((item) => item.id)) };
    };
    // More full-text matches than candidates, then newer mail holding the word only inside another:
    // the first page leaves the substring part out, and so must the pages after it.
    for (let i = 0; i < 4; i += 1) await send(`Zebra ${i}`, 'A zebra crossing.');
    for (let i = 0; i < 2; i += 1) await send(`Part ${i}`, 'An xzebrax crossing.');
    const zebras = await walk('zebra', 3);
    expect(zebras.pages.map((page) => [page.total, page.total_is_lower_bound])).toEqual(zebras.pages.map(() => [3, true]));
    expect(zebras.pages.flatMap((page) => page.items.map((item) => item.subject)).sort()).toEqual([
      'Zebra 1',
      'Zebra 2',
      'Zebra 3',
    ]);

    // Fewer full-text matches than candidates, with the substring part: newer full-text matches
    // arriving after the first page must neither drop that part nor join the walk.
    await send('Quokka', 'A quokka smiles.');
    for (let i = 0; i < 2; i += 1) await send(`Part ${i}`, 'An xquokkax smiles.');
    const first = (await walk('quokka', 3)).ids;
    const quokkas = await walk('quokka', 3, async () => {
      for (let i = 0; i < 4; i += 1) await send(`Late ${i}`, 'A late quokka.');
    });
    expect(quokkas.ids).toEqual(first);
    expect(quokkas.pages.map((page) => [page.total, page.total_is_lower_bound])).toEqual(quokkas.pages.map(() => [3, false]));

    // A forged token that widens the range: still at most twice the candidates ranked.
    const decoded = JSON.parse(Buffer.from(zebras.pages[0]!.next_page_token!, 'base64url').toString('utf8')) as unknown[];
    decoded.splice(4, 4, { t: '0001-01-01T00:00:00.000Z' }, '00000000-0000-0000-0000-000000000000');
    decoded.splice(6, 0, { t: '9999-12-31T00:00:00.000Z' }, 'ffffffff-ffff-ffff-ffff-ffffffffffff');
    decoded[8] = true; // and the substring part run: 5 full-text matches of quokka and 2 of xquokkax
    const forged = Buffer.from(JSON.stringify(decoded)).toString('base64url');
    const widened = await searchService(ctx.db, scope, searchQuery.parse({ q: 'quokka', limit: '1', page_token: forged }), 3);
    expect(widened.total).toBe(6);
    // Through HTTP, a token of another shape (before this one) is not ours.
    const old = Buffer.from(JSON.stringify(['search', ...decoded.slice(1, 6)])).toString('base64url');
    expect((await as(ctx.app, orgKey).get(`/v1/search?q=quokka&page_token=${old}`)).status).toBe(400);
  });

  it('refuses more negations in a row than Postgres parses, and parses every query it takes', async () => {
    for (const q of ['-'.repeat(33), `hello ${'-'.repeat(32)}`, `a ${'- '.repeat(17)}b`, `a${'-('.repeat(17)}b`]) {
      const res = await as(ctx.app, orgKey).get(`/v1/search?q=${encodeURIComponent(q)}`);
      expect({ q, status: res.status, body: JSON.stringify(res.body) }).toEqual({
        q,
        status: 400,
        body: expect.stringContaining('(negations) in a row'),
      });
    }
    for (const q of ['-'.repeat(16), `hello ${'-'.repeat(16)}x`, `-a ${'-b '.repeat(40)}`, 'well-known state-of-the-art x-y-z']) {
      expect(negationsTooDeep(q)).toBe(false);
      await as(ctx.app, orgKey)
        .get(`/v1/search?q=${encodeURIComponent(q)}`)
        .expect(200);
    }
    // Random queries of operators and words (a fixed seed): every one the rule takes, Postgres parses.
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31), seed % n);
    const parts = ['-', '-', '-', ' ', '(', ')', '!', '|', '&', '<', '"', 'or', 'cat', 'x-y', ':'];
    for (let i = 0; i < 300; i += 1) {
      const q = Array.from({ length: 20 + random(60) }, () => parts[random(parts.length)]).join('');
      if (negationsTooDeep(q)) continue;
      await ctx.db.$queryRaw`SELECT websearch_to_tsquery('english', ${q})::text`;
    }
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
    const substringSnippet = (text: string, q: string) =>
      resultSnippet({ headline: '', text, subjectHeadline: '', subject: '' }, q);
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

  it('falls back to the subject, marked, when the body holds no match', () => {
    const message = { headline: 'Nothing here', text: 'Nothing here', subject: 'Quarterly <b>budget</b>' };
    // ts_headline's marking of the (escaped) subject, when full-text search matched it.
    expect(
      resultSnippet({ ...message, subjectHeadline: `Quarterly &lt;b&gt;${START_MARK}budget${STOP_MARK}&lt;/b&gt;` }, 'budgets'),
    ).toBe('Quarterly &lt;b&gt;<mark>budget</mark>&lt;/b&gt;');
    // Else the subject around the substring, and else the body's start.
    expect(resultSnippet({ ...message, subjectHeadline: 'Quarterly' }, 'uarter')).toBe(
      'Q<mark>uarter</mark>ly &lt;b&gt;budget&lt;/b&gt;',
    );
    expect(resultSnippet({ ...message, subjectHeadline: 'Quarterly' }, 'zzz')).toBe('Nothing here');
    // A match in the body wins over the subject.
    expect(resultSnippet({ ...message, subjectHeadline: 'Quarterly' }, 'here')).toBe('Nothing <mark>here</mark>');
  });
});
