/**
 * Tenant scoping: the filter of every query for tenant-owned records. A record of another tenant
 * and an archived record match it no more than a record that does not exist, so both are 404
 * and absent from lists.
 */
export function liveIn(actor: { tenantId: string }) {
  return { tenantId: actor.tenantId, archivedAt: null };
}
