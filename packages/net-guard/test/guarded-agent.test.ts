import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { addressChecker, addressRefusal, createGuardedAgent, refusalMessage } from '../src/index.js';

const describe_ = (refusal: { reason: string }, resolved: boolean) => `${resolved ? 'resolves to' : 'is'} ${refusal.reason}`;

describe('addressChecker', () => {
  it('refuses hosts as written and the addresses a name resolves to; lets public ones through', async () => {
    const check = addressChecker({
      policy: { allowPrivate: false },
      resolve: (host) => Promise.resolve(host === 'inside.example' ? [{ address: '10.0.0.7' }] : [{ address: '93.184.215.14' }]),
      describe: describe_,
    });
    await expect(check('127.0.0.1')).rejects.toThrow('is a loopback address');
    await expect(check('[::1]')).rejects.toThrow('is a loopback address');
    await expect(check('metadata.google.internal')).rejects.toThrow('is a metadata service');
    await expect(check('inside.example')).rejects.toThrow('resolves to a private address');
    await expect(check('outside.example')).resolves.toBe('93.184.215.14');
  });

  it('allows private and loopback addresses with allowPrivate, never metadata ones', async () => {
    const check = addressChecker({ policy: { allowPrivate: true }, resolve: () => Promise.resolve([]), describe: describe_ });
    await expect(check('127.0.0.1')).resolves.toBe('127.0.0.1');
    await expect(check('169.254.169.254')).rejects.toThrow('is a metadata address');
  });
});

describe('createGuardedAgent', () => {
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    server = http.createServer((_req, res) => res.writeHead(302, { location: 'http://169.254.169.254/' }).end());
    server.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('connects to an allowed address (a name resolved by the given resolver), and refuses a refused one before connecting', async () => {
    const allowed = createGuardedAgent({
      policy: { allowPrivate: true },
      resolve: () => Promise.resolve([{ address: '127.0.0.1' }]),
      describe: describe_,
    });
    const strict = createGuardedAgent({
      policy: { allowPrivate: false },
      resolve: () => Promise.resolve([{ address: '127.0.0.1' }]),
      describe: (refusal, resolved) =>
        refusalMessage(resolved ? 'The host resolves to' : 'The host is', refusal, 'refused', 'X_ALLOW'),
    });
    try {
      const response = await request(`http://receiver.test:${port}/`, { dispatcher: allowed });
      await response.body.dump();
      // undici's request follows no redirect.
      expect(response.statusCode).toBe(302);
      const refused = await request(`http://receiver.test:${port}/`, { dispatcher: strict }).catch((error: unknown) => error);
      expect(addressRefusal(refused)?.message).toBe(
        'The host resolves to a loopback address, refused (a local deployment allows private and loopback addresses with X_ALLOW=true)',
      );
    } finally {
      await allowed.close();
      await strict.close();
    }
  });
});
