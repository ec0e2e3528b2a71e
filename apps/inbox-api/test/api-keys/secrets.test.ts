import { isWellFormedSecret, looksLikeSecret, newSecret, secretHash, shownPrefix } from '../../src/api-keys/secrets.js';

describe('API key secrets', () => {
  it('are inbx_ and 36 base62 characters, different every time, and carry a checksum', () => {
    const secrets = Array.from({ length: 200 }, newSecret);
    for (const secret of secrets) {
      expect(secret).toMatch(/^inbx_[0-9A-Za-z]{36}$/);
      expect(isWellFormedSecret(secret)).toBe(true);
      expect(looksLikeSecret(secret)).toBe(true);
    }
    expect(new Set(secrets).size).toBe(secrets.length);
    // Every character of the alphabet turns up in the random part: no bias toward a few.
    expect(new Set(secrets.flatMap((secret) => [...secret.slice(5, 35)])).size).toBe(62);
  });

  it('refuse look-alikes without asking the database: a changed character, a wrong length, another prefix', () => {
    const secret = newSecret();
    const changed = `${secret.slice(0, 10)}${secret[10] === 'a' ? 'b' : 'a'}${secret.slice(11)}`;
    for (const value of [
      changed,
      secret.slice(0, -1),
      `${secret}0`,
      secret.replace('inbx_', 'inbx-'),
      `x${secret}`,
      'inbx_',
      '',
      `${secret} `,
    ]) {
      expect(isWellFormedSecret(value)).toBe(false);
    }
    expect(looksLikeSecret('inbx_whatever')).toBe(true);
    expect(looksLikeSecret('operator-key')).toBe(false);
  });

  it('are stored as their SHA-256 and shown by their first 12 characters', () => {
    // printf 'inbx_abc' | sha256sum
    expect(secretHash('inbx_abc')).toBe('828b53ac0fed838056a3297dbd5d47ffbf4873d7f5a537d88edc596cbd0f5815');
    expect(secretHash('inbx_abc')).not.toBe(secretHash('inbx_abd'));
    const secret = newSecret();
    expect(shownPrefix(secret)).toBe(secret.slice(0, 12));
  });
});
