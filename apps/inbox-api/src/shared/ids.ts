const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Records are keyed by UUID; any other string cannot name one and is simply not found. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
