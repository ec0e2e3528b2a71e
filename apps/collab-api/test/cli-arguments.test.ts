import { parseCommand, UsageError } from '../src/cli/arguments.js';

describe('parseCommand', () => {
  it('reads bootstrap, the admin name defaulting to the e-mail (lower-cased)', () => {
    expect(
      parseCommand(['bootstrap', '--tenant-name', ' Acme ', '--admin-email', 'Ada@Example.com', '--admin-sub', 'idp|ada']),
    ).toEqual({
      name: 'bootstrap',
      tenantName: 'Acme',
      adminEmail: 'ada@example.com',
      adminName: 'ada@example.com',
      adminSub: 'idp|ada',
    });
    expect(
      parseCommand([
        'bootstrap',
        '--tenant-name',
        'Acme',
        '--admin-email',
        'a@b.test',
        '--admin-sub',
        's',
        '--admin-name',
        'Ada',
      ]),
    ).toMatchObject({ adminName: 'Ada' });
  });

  it('reads token with its options', () => {
    expect(parseCommand(['token', '--sub', 'idp|ada'])).toEqual({ name: 'token', sub: 'idp|ada', platformAdmin: false });
    expect(parseCommand(['token', '--sub', 's', '--email', 'A@b.test', '--platform-admin', '--ttl', '600'])).toEqual({
      name: 'token',
      sub: 's',
      email: 'a@b.test',
      platformAdmin: true,
      ttlSeconds: 600,
    });
  });

  it.each([
    [[], 'no command given'],
    [['frobnicate'], 'unknown command "frobnicate"'],
    [['bootstrap', '--tenant-name', 'Acme', '--admin-sub', 's'], '--admin-email is required'],
    [['bootstrap', '--tenant-name', 'Acme', '--admin-email', 'nope', '--admin-sub', 's'], '--admin-email Invalid email address'],
    [['bootstrap', '--tenant-name', '', '--admin-email', 'a@b.test', '--admin-sub', 's'], '--tenant-name Too small'],
    [['token'], '--sub is required'],
    [['token', '--sub', ''], '--sub Too small'],
    [['token', '--sub', 's', '--ttl', '0'], '--ttl must be a whole number of seconds'],
    [['token', '--sub', 's', '--ttl', '1.5'], '--ttl must be a whole number of seconds'],
    [['token', '--sub', 's', '--admin'], "Unknown option '--admin'"],
    [['token', '--sub', 's', 'extra'], "Unexpected argument 'extra'"],
  ])('refuses %j: %s', (args, message) => {
    expect(() => parseCommand(args)).toThrow(UsageError);
    expect(() => parseCommand(args)).toThrow(message);
  });
});
