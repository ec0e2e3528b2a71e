import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generatedSecret } from '../src/index.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'config-secret-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('generatedSecret', () => {
  it('creates a random secret readable by this user only, in a folder it makes', async () => {
    const file = path.join(dir, 'data', 'secret');
    const secret = await generatedSecret(file);

    expect(secret).toMatch(/^[\w-]{43}$/);
    expect((await readFile(file, 'utf8')).trim()).toBe(secret);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await generatedSecret(path.join(dir, 'other'))).not.toBe(secret);
  });

  it('answers the same secret to every later call and to calls at the same moment', async () => {
    const file = path.join(dir, 'secret');
    const secrets = await Promise.all(Array.from({ length: 10 }, () => generatedSecret(file)));

    expect(new Set(secrets).size).toBe(1);
    expect(await generatedSecret(file)).toBe(secrets[0]);
  });

  it('keeps a secret written by hand, and refuses a file that holds none', async () => {
    await writeFile(path.join(dir, 'secret'), '  chosen-by-an-operator\n');
    expect(await generatedSecret(path.join(dir, 'secret'))).toBe('chosen-by-an-operator');
    await writeFile(path.join(dir, 'blank'), '\n');
    await expect(generatedSecret(path.join(dir, 'blank'))).rejects.toThrow('blank holds no secret');
  });
});
