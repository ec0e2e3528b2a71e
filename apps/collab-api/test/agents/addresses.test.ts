import {
  type AddressKind,
  classifyAddress,
  refusalMessage,
  refusedAddress,
  refusedHost,
} from '../../src/adapters/agents/index.js';

describe('classifyAddress', () => {
  it.each<[string, AddressKind]>([
    ['93.184.215.14', 'public'],
    ['8.8.8.8', 'public'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.254', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.10', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.254', 'private'],
    ['100.128.0.1', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.3', 'loopback'],
    ['169.254.169.254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['169.254.0.1', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['2606:4700:4700::1111', 'public'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fd00:ec2::254', 'metadata'],
    ['FD00:EC2:0:0:0:0:0:254', 'metadata'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:8.8.8.8', 'public'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['::127.0.0.1', 'loopback'],
    // IPv4-translated (RFC 2765), 6to4 (the IPv4 address after 2002:), site-local, benchmarking.
    ['::ffff:0:7f00:1', 'loopback'],
    ['::ffff:0:a9fe:a9fe', 'metadata'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:a9fe:a9fe::1', 'metadata'],
    ['2002:0808:0808::1', 'public'],
    ['fec0::1', 'private'],
    ['198.18.0.1', 'reserved'],
    ['198.19.255.255', 'reserved'],
    ['198.20.0.1', 'public'],
  ])('%s is %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  it('throws for anything that is not an address', () => {
    expect(() => classifyAddress('example.com')).toThrow(TypeError);
  });
});

describe('refusedAddress', () => {
  it.each<[string, string | undefined, string | undefined]>([
    // address, refusal without COLLAB_AGENT_ALLOW_PRIVATE, refusal with it
    ['93.184.215.14', undefined, undefined],
    ['10.0.0.1', 'a private address', undefined],
    ['127.0.0.1', 'a loopback address', undefined],
    ['::1', 'a loopback address', undefined],
    ['fd12::1', 'a private address', undefined],
    ['169.254.169.254', 'a metadata address', 'a metadata address'],
    ['fd00:ec2::254', 'a metadata address', 'a metadata address'],
    ['169.254.10.10', 'a link-local address', 'a link-local address'],
    ['fe80::abcd', 'a link-local address', 'a link-local address'],
    ['0.0.0.0', 'an unspecified address', 'an unspecified address'],
    ['224.0.0.251', 'a multicast address', 'a multicast address'],
    ['::ffff:169.254.169.254', 'a metadata address', 'a metadata address'],
  ])('%s', (address, strict, allowingPrivate) => {
    expect(refusedAddress(address, { allowPrivate: false })?.reason).toBe(strict);
    expect(refusedAddress(address, { allowPrivate: true })?.reason).toBe(allowingPrivate);
    // What the setting would allow is what it allows.
    expect(refusedAddress(address, { allowPrivate: false })?.allowedWithPrivate ?? false).toBe(strict !== allowingPrivate);
  });
});

describe('refusedHost', () => {
  it.each<[string, string | undefined, string | undefined]>([
    ['agents.example.com', undefined, undefined],
    ['metadata.google.internal', 'a metadata service', 'a metadata service'],
    ['METADATA.GOOGLE.INTERNAL.', 'a metadata service', 'a metadata service'],
    ['metadata.google.internal..', 'a metadata service', 'a metadata service'],
    ['a.localhost..', 'a loopback address', undefined],
    ['localhost', 'a loopback address', undefined],
    ['api.localhost', 'a loopback address', undefined],
    ['[::1]', 'a loopback address', undefined],
    ['[fd00:ec2::254]', 'a metadata address', 'a metadata address'],
    ['169.254.169.254', 'a metadata address', 'a metadata address'],
    ['192.168.0.2', 'a private address', undefined],
  ])('%s', (host, strict, allowingPrivate) => {
    expect(refusedHost(host, { allowPrivate: false })?.reason).toBe(strict);
    expect(refusedHost(host, { allowPrivate: true })?.reason).toBe(allowingPrivate);
    expect(refusedHost(host, { allowPrivate: false })?.allowedWithPrivate ?? false).toBe(strict !== allowingPrivate);
  });

  it('sees the address behind the other ways of writing it, as URLs normalise them', () => {
    for (const url of ['http://2852039166/', 'http://0xa9fea9fe/', 'http://169.254.43518/', 'http://0251.0376.0251.0376/']) {
      expect(refusedHost(new URL(url).hostname, { allowPrivate: true })?.reason).toBe('a metadata address');
    }
  });
});

describe('refusalMessage', () => {
  it('names COLLAB_AGENT_ALLOW_PRIVATE for a private or loopback address, which a local deployment may allow', () => {
    for (const refusal of [
      refusedAddress('127.0.0.1', { allowPrivate: false }),
      refusedHost('localhost', { allowPrivate: false }),
    ]) {
      expect(refusalMessage('The host is', refusal!, 'which agents may not be called at')).toBe(
        'The host is a loopback address, which agents may not be called at (a local deployment allows private and loopback addresses with COLLAB_AGENT_ALLOW_PRIVATE=true)',
      );
    }
  });

  it('names no setting for the addresses no setting allows', () => {
    const refusal = refusedAddress('169.254.169.254', { allowPrivate: false })!;
    expect(refusalMessage('The host is', refusal, 'which agents may not be called at')).toBe(
      'The host is a metadata address, which agents may not be called at',
    );
  });
});
