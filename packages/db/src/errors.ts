/** Prisma's error for a unique constraint violation, optionally on one of the given fields. */
export function isUniqueViolation(error: unknown, field?: string): boolean {
  if (typeof error !== 'object' || error === null || (error as { code?: unknown }).code !== 'P2002') return false;
  if (!field) return true;
  return JSON.stringify((error as { meta?: unknown }).meta ?? {}).includes(field);
}
