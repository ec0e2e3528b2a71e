/**
 * Notification e-mails through the SMTP notifier, received by a real SMTP server on 127.0.0.1:
 * every Org admin of the deciding tenant on a new request, the requester on a decision, with the
 * content the spec asks for, names escaped in HTML; and a failing mail server that neither fails
 * nor undoes the request, its mail being retried by the queue.
 */
import type { AddressInfo } from 'node:net';
import { configProblems } from '@repo/config';
import PostalMime, { type Email } from 'postal-mime';
import { SMTPServer } from 'smtp-server';
import { Role } from '../../src/access/index.js';
import { configSchema } from '../../src/config.js';
import { as, createTestContext, type TestContext } from '../context.js';
import { type Member, seedTenant, type TenantFixture } from '../fixtures.js';
import { createProject, eventually, inviteRequest } from './helpers.js';

interface Delivery {
  to: string[];
  mail: Email;
}

let server: SMTPServer;
let ctx: TestContext;
let a: TenantFixture;
let b: TenantFixture;
let secondAdmin: Member;
const deliveries: Delivery[] = [];
/** While set, the server refuses every recipient with this temporary failure. */
let failing = false;

beforeAll(async () => {
  server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(_address, _session, callback) {
      if (failing) return callback(Object.assign(new Error('4.3.2 Try again later'), { responseCode: 451 }));
      callback();
    },
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
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  ctx = await createTestContext({
    COLLAB_NOTIFIER: 'smtp',
    SMTP_URL: `smtp://127.0.0.1:${port}`,
    COLLAB_MAIL_FROM: 'Collab <approvals@collab.example.com>',
    COLLAB_PUBLIC_UI_URL: 'https://ui.example.com/',
  });
  a = await seedTenant(ctx, 'Acme <Labs>');
  b = await seedTenant(ctx, 'Globex & "Partners"');
  const email = `second-admin@${b.id}.test`;
  const user = await ctx.db.user.create({
    data: {
      tenantId: b.id,
      email,
      liveEmail: email,
      name: 'Second admin',
      role: Role.OrgAdmin,
      identityProviderId: `idp|2-${b.id}`,
    },
  });
  secondAdmin = { id: user.id, sub: `idp|2-${b.id}`, email, role: Role.OrgAdmin, token: ctx.token(`idp|2-${b.id}`) };
  // A requester whose name is markup.
  await ctx.db.user.update({ where: { id: a.user.id }, data: { name: 'Eve <script>alert("x")</script>' } });
  await ctx.startWorker();
});
afterAll(async () => {
  await ctx.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(() => {
  deliveries.length = 0;
  failing = false;
});

const deliveredTo = (address: string) => deliveries.filter((delivery) => delivery.to.includes(address));

it('sends every Org admin of the invited tenant the request, the requester, a review link and the expiry date', async () => {
  const projectId = await createProject(ctx, a.admin, 'Q4 <forecast>');
  const res = await as(ctx.app, a.user.token).post('/api/v1/approval/project-tenant', { project_id: projectId, tenant_id: b.id });
  expect(res.status).toBe(201);
  const { id, expires_at } = res.body as { id: string; expires_at: string };
  await eventually(() => deliveries.length >= 2);
  expect(deliveries.flatMap((delivery) => delivery.to).sort()).toEqual([b.admin.email, secondAdmin.email].sort());
  expect(deliveredTo(a.user.email)).toEqual([]);

  const { mail } = deliveredTo(b.admin.email)[0]!;
  expect(mail.from).toMatchObject({ address: 'approvals@collab.example.com' });
  expect(mail.subject).toBe('Invitation to a project: Q4 <forecast>');
  expect(mail.messageId).toBe(`<approval-${id}-created-${b.admin.id}@collab-api>`);
  const text = mail.text!;
  expect(text).toContain('Eve <script>alert("x")</script> (' + a.user.email + ') asks to invite the tenant');
  expect(text).toContain('Project: Q4 <forecast>');
  expect(text).toContain('Tenant invited: Globex & "Partners"');
  expect(text).toContain(`Expires: ${expires_at}`);
  expect(text).toContain(`Review the request: https://ui.example.com/approvals/${id}`);
  const html = mail.html!;
  expect(html).not.toContain('<script>');
  expect(html).not.toContain('<forecast>');
  expect(html).toContain('Eve &#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62;');
  expect(html).toContain('Globex &#38; &#34;Partners&#34;');
  expect(html).toContain(`href="https://ui.example.com/approvals/${id}"`);
  expect(html).toContain(expires_at);
});

it('sends the requester the approval, the reviewer and the next steps', async () => {
  const projectId = await createProject(ctx, a.admin, 'Approved project');
  const approvalId = await inviteRequest(ctx, a.user, projectId, b.id);
  await eventually(() => deliveries.length >= 2);
  await as(ctx.app, secondAdmin.token).post(`/api/v1/approval/${approvalId}/approve`).expect(200);
  await eventually(() => deliveredTo(a.user.email).length === 1);
  const { mail } = deliveredTo(a.user.email)[0]!;
  expect(mail.subject).toBe('Approved: Approved project');
  expect(mail.text).toContain('Decision: approved');
  expect(mail.text).toContain(`Reviewed by: Second admin <${secondAdmin.email}>`);
  expect(mail.text).toContain('Next steps: the users of "Globex & "Partners"" now find the project "Approved project"');
  expect(mail.text).not.toContain('Reason:');
  expect(mail.html).toContain('Globex &#38; &#34;Partners&#34;');
});

it('sends the requester the rejection with its reason', async () => {
  const projectId = await createProject(ctx, a.admin, 'Rejected project');
  const approvalId = await inviteRequest(ctx, a.user, projectId, b.id);
  await eventually(() => deliveries.length >= 2);
  await as(ctx.app, b.admin.token)
    .post(`/api/v1/approval/${approvalId}/reject`, { rejection_reason: 'Budget <closed> & frozen' })
    .expect(200);
  await eventually(() => deliveredTo(a.user.email).length === 1);
  const { mail } = deliveredTo(a.user.email)[0]!;
  expect(mail.subject).toBe('Rejected: Rejected project');
  expect(mail.text).toContain('Decision: rejected');
  expect(mail.text).toContain('Reviewed by: Admin <' + b.admin.email + '>');
  expect(mail.text).toContain('Reason: Budget <closed> & frozen');
  expect(mail.html).toContain('Budget &#60;closed&#62; &#38; frozen');
});

it('approves even while the mail server fails, and leaves the mail to the retried job', async () => {
  const projectId = await createProject(ctx, a.admin, 'Mail down');
  const approvalId = await inviteRequest(ctx, a.user, projectId, b.id);
  await eventually(() => deliveries.length >= 2);
  failing = true;
  await as(ctx.app, b.admin.token).post(`/api/v1/approval/${approvalId}/approve`).expect(200, {});
  expect(await ctx.db.projectTenant.count({ where: { projectId } })).toBe(1);
  await as(ctx.app, b.user.token).get(`/api/v1/projects/${projectId}`).expect(200);
  // The job's first attempt failed on the server's 451 and waits for its retry.
  const attempts = async () =>
    ctx.db.$queryRaw<{ state: string; error: string }[]>`SELECT state::text, output->>'message' AS error FROM pgboss.job
      WHERE name = 'approval-mail' AND data->>'approval_id' = ${approvalId} AND data->>'event' = 'approved'`;
  await eventually(async () => (await attempts())[0]?.state === 'retry');
  expect(await attempts()).toEqual([{ state: 'retry', error: expect.stringMatching(/^SMTP failed: .*451/) }]);
  expect(deliveredTo(a.user.email)).toEqual([]);

  // Once the server is back, the retry (brought forward from its 30 s delay) delivers the message.
  failing = false;
  await ctx.db.$executeRaw`UPDATE pgboss.job SET start_after = now()
    WHERE name = 'approval-mail' AND data->>'approval_id' = ${approvalId} AND state = 'retry'`;
  await eventually(() => deliveredTo(a.user.email).length === 1);
  expect(deliveredTo(a.user.email)[0]!.mail.subject).toBe('Approved: Mail down');
});

it('needs SMTP_URL for the smtp notifier, and takes smtp(s) URLs only', () => {
  expect(configProblems(configSchema, { COLLAB_NOTIFIER: 'smtp' })).toEqual([
    expect.stringMatching(/^SMTP_URL is required when COLLAB_NOTIFIER is smtp/),
  ]);
  expect(configProblems(configSchema, { COLLAB_NOTIFIER: 'smtp', SMTP_URL: 'https://smtp.example.com' })).toHaveLength(1);
  expect(configProblems(configSchema, { COLLAB_NOTIFIER: 'smtp', SMTP_URL: 'smtps://u:p@smtp.example.com:465' })).toEqual([]);
  expect(configProblems(configSchema, { COLLAB_NOTIFIER: 'sendmail' })).toHaveLength(1);
  expect(configProblems(configSchema, { COLLAB_PUBLIC_UI_URL: 'not a url' })).toHaveLength(1);
});
