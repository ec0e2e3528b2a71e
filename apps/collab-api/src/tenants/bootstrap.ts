import { Role } from '../access/index.js';
import type { Database } from '../database.js';
import { conflictOnDuplicate } from '../shared/conflicts.js';

export interface BootstrapInput {
  tenantName: string;
  adminEmail: string;
  adminName: string;
  /** The `sub` of the admin's tokens. */
  adminSub: string;
}

/**
 * Creates a tenant with its first Org admin, already linked to the admin's identity: how a
 * tenant gets its first user (`cli bootstrap`), since every user is created by another one.
 */
export async function bootstrapTenant(db: Database, input: BootstrapInput): Promise<{ tenantId: string; userId: string }> {
  return db.$transaction(async (tx) => {
    const tenant = await tx.tenant.create({ data: { name: input.tenantName } });
    const admin = await conflictOnDuplicate(
      tx.user.create({
        data: {
          tenantId: tenant.id,
          email: input.adminEmail,
          liveEmail: input.adminEmail,
          name: input.adminName,
          role: Role.OrgAdmin,
          identityProviderId: input.adminSub,
        },
      }),
      ['identity_provider_id'],
      `The identity ${input.adminSub} is already linked to a user`,
    );
    return { tenantId: tenant.id, userId: admin.id };
  });
}
