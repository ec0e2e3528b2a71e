import { randomUUID } from 'node:crypto';
import { Role } from '../src/access/index.js';
import { bootstrapTenant } from '../src/tenants/bootstrap.js';
import type { TestContext } from './context.js';

export interface Member {
  id: string;
  sub: string;
  email: string;
  role: Role;
  token: string;
}

export interface TenantFixture {
  id: string;
  admin: Member;
  editor: Member;
  user: Member;
}

/**
 * A tenant with a signed-in user of each role, made as `cli bootstrap` makes a tenant and its
 * first Org admin; the others are linked to their identity as a first sign-in would.
 */
export async function seedTenant(ctx: TestContext, name: string): Promise<TenantFixture> {
  const tag = `${name.toLowerCase().replace(/\W+/g, '-')}-${randomUUID().slice(0, 8)}`;
  const adminEmail = `admin@${tag}.test`;
  const adminSub = `idp|admin-${tag}`;
  const { tenantId, userId } = await bootstrapTenant(ctx.db, { tenantName: name, adminEmail, adminName: 'Admin', adminSub });
  const member = async (role: Role, label: string): Promise<Member> => {
    const email = `${label}@${tag}.test`;
    const sub = `idp|${label}-${tag}`;
    const user = await ctx.db.user.create({
      data: { tenantId, email, liveEmail: email, name: label, role, identityProviderId: sub },
    });
    return { id: user.id, sub, email, role, token: ctx.token(sub) };
  };
  return {
    id: tenantId,
    admin: { id: userId, sub: adminSub, email: adminEmail, role: Role.OrgAdmin, token: ctx.token(adminSub) },
    editor: await member(Role.DatasetEditor, 'editor'),
    user: await member(Role.DatasetUser, 'user'),
  };
}

/** A platform operator who is no tenant's user. */
export function operatorToken(ctx: TestContext): string {
  return ctx.token(`idp|operator-${randomUUID()}`, { platformAdmin: true });
}
