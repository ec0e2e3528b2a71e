import { NotFoundError } from '@repo/errors';
import { type Caller, requireTenantAdmin, Role } from '../access/index.js';
import type { Database } from '../database.js';
import type { Tenant } from '../generated/prisma/client.js';
import { iso, isoOrNull, oldestFirst, type ListOptions } from '../shared/schemas.js';
import type { CreateTenantInput, TenantResponse } from './schemas.js';

function toTenantResponse(tenant: Tenant): TenantResponse {
  return { id: tenant.id, name: tenant.name, created_at: iso(tenant.createdAt), archived_at: isoOrNull(tenant.archivedAt) };
}

/** With `first_admin`, the tenant and its first Org admin are created together or not at all. */
export async function createTenant(db: Database, input: CreateTenantInput): Promise<TenantResponse> {
  const admin = input.first_admin;
  const tenant = await db.tenant.create({
    data: {
      name: input.name,
      users: admin && { create: { email: admin.email, liveEmail: admin.email, name: admin.name, role: Role.OrgAdmin } },
    },
  });
  return toTenantResponse(tenant);
}

export async function listTenants(db: Database, page: ListOptions): Promise<{ tenants: TenantResponse[] }> {
  const tenants = await db.tenant.findMany({ where: { archivedAt: null }, ...oldestFirst(page) });
  return { tenants: tenants.map(toTenantResponse) };
}

export async function getTenant(db: Database, caller: Caller, tenantId: string): Promise<TenantResponse> {
  requireTenantAdmin(caller, tenantId);
  return toTenantResponse(await findLiveTenant(db, tenantId));
}

export async function renameTenant(
  db: Database,
  caller: Caller,
  tenantId: string,
  input: { name?: string | null },
): Promise<TenantResponse> {
  requireTenantAdmin(caller, tenantId);
  const tenant = await findLiveTenant(db, tenantId);
  if (!input.name) return toTenantResponse(tenant);
  return toTenantResponse(await db.tenant.update({ where: { id: tenant.id }, data: { name: input.name } }));
}

/** Archives the tenant: it disappears, and its users can no longer sign in. Its records stay as they are. */
export async function archiveTenant(db: Database, tenantId: string): Promise<void> {
  const { count } = await db.tenant.updateMany({ where: { id: tenantId, archivedAt: null }, data: { archivedAt: new Date() } });
  if (count === 0) throw new NotFoundError('Tenant not found');
}

async function findLiveTenant(db: Database, tenantId: string): Promise<Tenant> {
  const tenant = await db.tenant.findFirst({ where: { id: tenantId, archivedAt: null } });
  if (!tenant) throw new NotFoundError('Tenant not found');
  return tenant;
}
