/**
 * The approvals pages in Debian's chromium: an Org admin follows the review link of the e-mail a
 * real SMTP server received, signs in on the page it opens, reads the request (names with markup
 * shown as text) and approves it; another request is rejected with a reason from the keyboard; the
 * requester follows both on the approvals page; a non-admin opening the link is told why nothing
 * shows; a link opened in a new tab is signed in as the browser's other tabs are. Every control is
 * labelled, and the pages fit 375 px.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import PostalMime, { type Email } from 'postal-mime';
import { SMTPServer } from 'smtp-server';
import { eventually, createProject, inviteRequest } from '../approvals/helpers.js';
import { focused, freePort, listen, overflows, signIn, unlabelled, withBrowser } from '../browser/page.js';
import { ensureChromium } from '../browser/chromium.js';
import { as, createTestContext, type TestContext } from '../context.js';
import { seedTenant, type TenantFixture } from '../fixtures.js';

jest.setTimeout(180_000);

const MARKUP_PROJECT = '<img src=x onerror="alert(1)"> Q4 forecast';
const deliveries: { to: string[]; mail: Email }[] = [];
let smtp: SMTPServer;
let ctx: TestContext;
let server: Server;
let baseUrl: string;
let a: TenantFixture;
let b: TenantFixture;

beforeAll(async () => {
  ensureChromium();
  smtp = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        void PostalMime.parse(Buffer.concat(chunks)).then((mail) => {
          deliveries.push({ to: session.envelope.rcptTo.map((rcpt) => rcpt.address), mail });
          callback();
        });
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  ctx = await createTestContext({
    COLLAB_NOTIFIER: 'smtp',
    SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
    COLLAB_MAIL_FROM: 'Collab <approvals@collab.example.com>',
    PUBLIC_BASE_URL: baseUrl,
  });
  await ctx.startWorker();
  a = await seedTenant(ctx, 'Acme');
  b = await seedTenant(ctx, 'Globex <Partners>');
  await ctx.db.user.update({ where: { id: a.user.id }, data: { name: 'Eve <b>bold</b>' } });
  await ctx.db.user.update({ where: { id: b.admin.id }, data: { name: 'Grace' } });
  server = await listen(ctx.app, port);
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await ctx?.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

/** The review link of the e-mail `to` received about request `id`. */
async function reviewLink(to: string, id: string): Promise<string> {
  const mailOf = () => deliveries.find((each) => each.to.includes(to) && each.mail.text?.includes(id));
  await eventually(() => mailOf() !== undefined, 30_000);
  const link = /Review the request: (\S+)/.exec(mailOf()!.mail.text!)?.[1];
  expect(link).toBe(`${baseUrl}/console/approvals/${id}`);
  expect(mailOf()!.mail.html).toContain(`href="${baseUrl}/console/approvals/${id}"`);
  return link!;
}

it('lets an Org admin approve from the e-mail link: sign in on the page it opens, then the request and its outcome', async () => {
  const projectId = await createProject(ctx, a.admin, MARKUP_PROJECT);
  const id = await inviteRequest(ctx, a.user, projectId, b.id);
  const link = await reviewLink(b.admin.email, id);
  await withBrowser(async (page, problems) => {
    await page.goto(link);
    await signIn(page, b.admin.token);
    expect(page.url()).toBe(link);
    await expect(page.locator('#who').textContent()).resolves.toBe(`Signed in as Grace (Org admin) · ${b.admin.email}`);
    await page.getByRole('heading', { name: `Join a project: ${MARKUP_PROJECT}` }).waitFor();
    const details = page.locator('#request-fields');
    await expect(details.textContent()).resolves.toContain('pending');
    expect(await details.textContent()).toContain(`Eve <b>bold</b> <${a.user.email}>`);
    expect(await details.textContent()).toContain('The tenant Globex <Partners> joins the project');
    expect(await page.locator('#request-fields img, #request-fields b').count()).toBe(0);
    expect(await details.textContent()).toContain('Expires');
    expect(await unlabelled(page)).toEqual([]);
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('status').filter({ hasText: 'Approved: the association is made' }).waitFor();
    await expect(details.textContent()).resolves.toContain('✓ approved');
    expect(await page.locator('#decision').isHidden()).toBe(true);
    expect(problems).toEqual([]);
  });
  expect((await as(ctx.app, a.admin.token).get(`/api/v1/approval/${id}`)).body.approval.status).toBe('approved');
});

it('rejects with a reason from the keyboard; the requester sees both outcomes; a non-admin is told why nothing shows', async () => {
  const projectId = await createProject(ctx, a.admin, 'Second project');
  const id = await inviteRequest(ctx, a.user, projectId, b.id);
  const link = await reviewLink(b.admin.email, id);
  await withBrowser(async (page, problems) => {
    await page.goto(link);
    await signIn(page, b.admin.token);
    await page.getByLabel(/^Reason/).fill('Not this quarter <sorry>');
    await page.keyboard.press('Tab');
    await expect(focused(page)).resolves.toBe('Approve');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Rejected' }).waitFor();
    await expect(page.locator('#request-fields').textContent()).resolves.toContain('Not this quarter <sorry>');
    // The pending list no longer holds it.
    await page.getByRole('link', { name: 'All approval requests' }).click();
    await page.locator('#pending-empty').waitFor();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, a.user.token);
    const mine = page.locator('#mine tbody tr');
    await mine.nth(1).waitFor();
    expect(await mine.nth(0).textContent()).toContain('✕ rejected');
    expect(await mine.nth(0).textContent()).toContain('Not this quarter <sorry>');
    expect(await mine.nth(1).textContent()).toContain('✓ approved');
    expect(await mine.nth(1).textContent()).toContain(MARKUP_PROJECT);
    expect(await page.locator('#pending-panel').isHidden()).toBe(true);

    await page.goto(link);
    await page.getByText('Only Org admins see approval requests').waitFor();
    expect(await page.locator('#decision').isHidden()).toBe(true);
    expect(problems.filter((problem) => !problem.includes('403'))).toEqual([]);
  });
});

it('opens the e-mail link in a new tab signed in as the other tab is; a sign-out signs out both', async () => {
  const projectId = await createProject(ctx, a.admin, 'Third project');
  const id = await inviteRequest(ctx, a.user, projectId, b.id);
  const link = await reviewLink(b.admin.email, id);
  await withBrowser(async (page, problems) => {
    await page.goto(`${baseUrl}/console/approvals`);
    await signIn(page, b.admin.token);
    // As a mail client opens a link: a new tab of the same browser.
    const fromMail = await page.context().newPage();
    await fromMail.goto(link);
    await fromMail.getByRole('heading', { name: 'Join a project: Third project' }).waitFor();
    expect(await fromMail.locator('#who').textContent()).toBe(`Signed in as Grace (Org admin) · ${b.admin.email}`);
    expect(await fromMail.locator('#sign-in').isHidden()).toBe(true);

    await fromMail.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('Signed out in another tab.').waitFor();
    expect(await page.locator('#workspace').isHidden()).toBe(true);
    // Signed out everywhere: a new tab asks for a token again.
    const later = await page.context().newPage();
    await later.goto(link);
    await later.getByLabel('Access token').waitFor();
    expect(await later.locator('#who').textContent()).toBe('');
    expect(problems).toEqual([]);
  });
});

it('fits a 375 px wide screen, and answers a malformed or unknown id in words', async () => {
  await withBrowser(
    async (page) => {
      await page.goto(`${baseUrl}/console/approvals/not-an-id`);
      await signIn(page, b.admin.token);
      await page.getByText('No such request for your tenant').waitFor();
      expect(await overflows(page)).toEqual([]);
      await page.goto(`${baseUrl}/console/approvals`);
      await page.locator('#mine-empty').waitFor();
      expect(await overflows(page)).toEqual([]);
      expect(await unlabelled(page)).toEqual([]);
    },
    { width: 375, height: 800 },
  );
});
