import { ConflictError } from '@repo/errors';
import { chooseInvitation } from '../src/auth/sign-in.js';

describe('chooseInvitation', () => {
  const acme = { userId: 'u-acme', tenantId: 't-acme' };
  const other = { userId: 'u-other', tenantId: 't-other' };

  it('links the only pending user, and none when there is none', () => {
    expect(chooseInvitation([acme], undefined)).toBe(acme);
    expect(chooseInvitation([], undefined)).toBeUndefined();
  });

  it('asks the caller to choose among several, naming no tenant', () => {
    const choose = () => chooseInvitation([acme, other], undefined);
    expect(choose).toThrow(ConflictError);
    expect(choose).toThrow(/X-Tenant-Id/);
    expect(choose).not.toThrow(/t-acme|t-other/);
  });

  it('takes the tenant the request names, and nothing else', () => {
    expect(chooseInvitation([acme, other], 't-other')).toBe(other);
    expect(chooseInvitation([acme], 't-other')).toBeUndefined();
    expect(chooseInvitation([], 't-acme')).toBeUndefined();
  });
});
