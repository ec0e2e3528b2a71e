/**
 * Which network addresses a service may call out to (agents, webhooks): the rules against
 * server-side request forgery, as pure functions of an address. guarded-agent.ts applies them to
 * every address a host resolves to, at every connection; services apply them to a URL's text.
 */
import { isIP } from 'node:net';

export type AddressKind =
  | 'public'
  /** RFC 1918, carrier-grade NAT (100.64/10) and unique local IPv6 (fc00::/7). */
  | 'private'
  | 'loopback'
  /** 169.254/16 and fe80::/10, where cloud metadata services and their neighbours live. */
  | 'link-local'
  /** The cloud metadata endpoints: 169.254.169.254, fd00:ec2::254 (AWS), 100.100.100.200 (Alibaba). */
  | 'metadata'
  /** 0.0.0.0/8 and ::, which reach this host. */
  | 'unspecified'
  | 'multicast'
  /** Broadcast and the ranges reserved for future use (240/4). */
  | 'reserved';

export interface AddressPolicy {
  /** Private and loopback addresses are allowed (development, tests: e.g. COLLAB_AGENT_ALLOW_PRIVATE). */
  allowPrivate: boolean;
}

/** Allowed only with `allowPrivate`; every kind but these and `public` is always refused. */
const PRIVATE_KINDS: ReadonlySet<AddressKind> = new Set(['private', 'loopback']);

/** Host names of metadata services, refused whatever they resolve to. */
const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata.goog', 'metadata']);

type Range = [prefix: number[], bits: number, kind: AddressKind];

// Most specific first: the first range that holds the address decides.
const IPV4_RANGES: Range[] = [
  [[169, 254, 169, 254], 32, 'metadata'],
  [[100, 100, 100, 200], 32, 'metadata'],
  [[255, 255, 255, 255], 32, 'reserved'],
  [[0], 8, 'unspecified'],
  [[10], 8, 'private'],
  [[100, 64], 10, 'private'],
  [[127], 8, 'loopback'],
  [[169, 254], 16, 'link-local'],
  [[172, 16], 12, 'private'],
  [[192, 168], 16, 'private'],
  // Benchmarking (RFC 2544): no public host lives there.
  [[198, 18], 15, 'reserved'],
  [[224], 4, 'multicast'],
  [[240], 4, 'reserved'],
];

const IPV6_RANGES: Range[] = [
  [[0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54], 128, 'metadata'],
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 128, 'unspecified'],
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], 128, 'loopback'],
  [[0xfe, 0x80], 10, 'link-local'],
  // Site-local (deprecated, RFC 3879), still routed inside some networks.
  [[0xfe, 0xc0], 10, 'private'],
  [[0xfc], 7, 'private'],
  [[0xff], 8, 'multicast'],
];

/** IPv6 prefixes whose last 32 bits are an IPv4 address that the connection reaches in the end. */
const EMBEDDED_IPV4: [prefix: number[], bits: number][] = [
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff], 96], // IPv4-mapped ::ffff:a.b.c.d
  [[0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0], 96], // IPv4-translated ::ffff:0:a.b.c.d (RFC 2765)
  [[0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0], 96], // NAT64 64:ff9b::a.b.c.d
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 96], // IPv4-compatible ::a.b.c.d (deprecated)
];

/** What kind of address `address` (an IPv4 or IPv6 literal, without brackets) is; throws for anything else. */
export function classifyAddress(address: string): AddressKind {
  const bytes = addressBytes(address);
  if (bytes.length === 4) return kindIn(IPV4_RANGES, bytes);
  const exact = kindIn(IPV6_RANGES, bytes);
  if (exact !== 'public') return exact;
  // 6to4 (2002:a.b.c.d::/48): the IPv4 address of the relay's far end sits right after the prefix.
  if (matches(bytes, [0x20, 0x02], 16)) return kindIn(IPV4_RANGES, bytes.slice(2, 6));
  const embedded = EMBEDDED_IPV4.find(([prefix, bits]) => matches(bytes, prefix, bits));
  return embedded ? kindIn(IPV4_RANGES, bytes.slice(12)) : 'public';
}

/** Why an address or host may not be called; never the address itself. */
export interface Refusal {
  /** What the address is: `a loopback address`, `a metadata service`, ... */
  reason: string;
  /** A private or loopback address, which `allowPrivate` allows. */
  allowedWithPrivate: boolean;
}

/** Why `address` may not be called, or undefined when it may. */
export function refusedAddress(address: string, policy: AddressPolicy): Refusal | undefined {
  const kind = classifyAddress(address);
  if (kind === 'public' || (policy.allowPrivate && PRIVATE_KINDS.has(kind))) return undefined;
  return { reason: `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind} address`, allowedWithPrivate: PRIVATE_KINDS.has(kind) };
}

/**
 * Why a URL's host (as `new URL().hostname` gives it) is refused before anything is resolved: an
 * address literal refused by refusedAddress, a metadata service's name, or `localhost`.
 */
export function refusedHost(hostname: string, policy: AddressPolicy): Refusal | undefined {
  const host = hostname
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.+$/, '');
  if (isIP(host)) return refusedAddress(host, policy);
  if (METADATA_HOSTS.has(host)) return { reason: 'a metadata service', allowedWithPrivate: false };
  if ((host === 'localhost' || host.endsWith('.localhost')) && !policy.allowPrivate) {
    return { reason: 'a loopback address', allowedWithPrivate: true };
  }
  return undefined;
}

/**
 * The refusal as a message: `<subject> <reason>, <consequence>`, and for a private or loopback
 * address how a local deployment (servers on this machine or its network) allows it: with the
 * setting `allowSetting` (an environment variable) set to true.
 */
export function refusalMessage(subject: string, refusal: Refusal, consequence: string, allowSetting: string): string {
  const remedy = refusal.allowedWithPrivate
    ? ` (a local deployment allows private and loopback addresses with ${allowSetting}=true)`
    : '';
  return `${subject} ${refusal.reason}, ${consequence}${remedy}`;
}

function kindIn(ranges: Range[], bytes: number[]): AddressKind {
  return ranges.find(([prefix, bits]) => matches(bytes, prefix, bits))?.[2] ?? 'public';
}

function matches(bytes: number[], prefix: number[], bits: number): boolean {
  for (let bit = 0; bit < bits; bit++) {
    const byte = bit >> 3;
    const mask = 0x80 >> (bit & 7);
    if (((bytes[byte] ?? 0) & mask) !== ((prefix[byte] ?? 0) & mask)) return false;
  }
  return true;
}

/** The 4 or 16 bytes of an address literal. */
function addressBytes(address: string): number[] {
  const family = isIP(address);
  if (family === 4) return address.split('.').map(Number);
  if (family !== 6) throw new TypeError(`Not an IP address: ${address}`);
  // A zone (fe80::1%eth0) names an interface, not part of the address.
  let text = address.replace(/%.*$/, '').toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::') as [string, string | undefined];
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const high = groups(head);
  const low = tail === undefined ? [] : groups(tail);
  const all = [...high, ...Array<number>(8 - high.length - low.length).fill(0), ...low];
  return all.flatMap((group) => [group >> 8, group & 0xff]);
}
