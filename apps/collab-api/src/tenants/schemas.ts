import { z } from 'zod';
import { archivedAt, displayName, email, idParams, timestamp } from '../shared/schemas.js';

export const tenantSchema = z
  .object({ id: z.uuid(), name: z.string(), created_at: timestamp, archived_at: archivedAt })
  .meta({ id: 'Tenant' });

export type TenantResponse = z.input<typeof tenantSchema>;

export const tenantList = z.object({ tenants: z.array(tenantSchema) }).meta({ id: 'TenantList' });

export const tenantParams = idParams('tenant_id');

export const createTenantBody = z.strictObject({
  name: displayName(),
  first_admin: z.strictObject({ email, name: displayName() }).optional().meta({
    description: 'Optional first Org admin, created with the tenant and linked on their first sign-in with this verified e-mail',
  }),
});

export type CreateTenantInput = z.output<typeof createTenantBody>;

export const updateTenantBody = z.strictObject({
  name: displayName().nullish().meta({ description: 'New name; absent or null keeps the current one' }),
});
