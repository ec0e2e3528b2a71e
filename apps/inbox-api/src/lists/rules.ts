/**
 * Allow and block lists as pure rules. An entry is an address (`name@example.com`) or a domain
 * (`example.com`, which also covers its subdomains), lower-case. Block always wins; where a level
 * (the organization's, the inbox's) has allow entries for a direction, an address must match one
 * of them to pass. Both levels apply.
 */
import { domainToASCII } from 'node:url';

export const LIST_DIRECTIONS = ['send', 'receive'] as const;
export type ListDirection = (typeof LIST_DIRECTIONS)[number];
export const LIST_TYPES = ['allow', 'block'] as const;
export type ListType = (typeof LIST_TYPES)[number];

export interface ListRule {
  level: 'organization' | 'inbox';
  type: ListType;
  entry: string;
}

const LOCAL_PART = /^[^\s\p{Cc}@<>()",;:\\[\]]{1,64}$/u;
const DOMAIN = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

/**
 * A domain as lists compare it: lower-case, without the trailing dot of a fully qualified name
 * (`evil.test.` is `evil.test`), an international name in its ASCII form (`bücher.test` is
 * `xn--bcher-kva.test`, as the DNS knows it). A name IDNA refuses stays as written.
 */
export function canonicalDomain(domain: string): string {
  const lower = domain.toLowerCase().replace(/\.+$/, '');
  return domainToASCII(lower) || lower;
}

/**
 * A list entry as stored: trimmed, lower-case, its domain canonical; a domain may be written
 * `@example.com`. Undefined when it is neither an address nor a domain (a domain needs a dot:
 * `localhost` is refused).
 */
export function normaliseListEntry(raw: string): { kind: 'address' | 'domain'; entry: string } | undefined {
  const value = raw.trim().toLowerCase();
  if (value.length === 0 || value.length > 320) return undefined;
  const at = value.lastIndexOf('@');
  if (at === -1) {
    const domain = canonicalDomain(value);
    return DOMAIN.test(domain) ? { kind: 'domain', entry: domain } : undefined;
  }
  const local = value.slice(0, at);
  const domain = canonicalDomain(value.slice(at + 1));
  if (!DOMAIN.test(domain)) return undefined;
  if (local === '') return { kind: 'domain', entry: domain };
  return LOCAL_PART.test(local) ? { kind: 'address', entry: `${local}@${domain}` } : undefined;
}

/** Whether `address` is the entry's address, or at the entry's domain or one of its subdomains. */
export function matchesEntry(address: string, entry: string): boolean {
  const lower = address.trim().toLowerCase();
  const at = lower.lastIndexOf('@');
  const domain = canonicalDomain(lower.slice(at + 1));
  if (entry.includes('@')) return `${lower.slice(0, at + 1)}${domain}` === entry;
  return domain === entry || domain.endsWith(`.${entry}`);
}

/** Whether the rules let `address` through. */
export function passesLists(address: string, rules: readonly ListRule[]): boolean {
  if (rules.some((rule) => rule.type === 'block' && matchesEntry(address, rule.entry))) return false;
  for (const level of ['organization', 'inbox'] as const) {
    const allows = rules.filter((rule) => rule.level === level && rule.type === 'allow');
    if (allows.length > 0 && !allows.some((rule) => matchesEntry(address, rule.entry))) return false;
  }
  return true;
}

/** The addresses the rules refuse, lower-case, each once, in the order given. */
export function refusedAddresses(addresses: readonly string[], rules: readonly ListRule[]): string[] {
  if (rules.length === 0) return [];
  const unique = [...new Set(addresses.map((address) => address.trim().toLowerCase()))];
  return unique.filter((address) => !passesLists(address, rules));
}
