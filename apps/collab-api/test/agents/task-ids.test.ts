import { tenantIds } from '../../src/agents/task-ids.js';

const SECRET = 'test-secret';
const TENANT_A = '01900000-0000-7000-8000-00000000000a';
const TENANT_B = '01900000-0000-7000-8000-00000000000b';

describe('tenantIds', () => {
  const a = tenantIds(SECRET, TENANT_A);
  const b = tenantIds(SECRET, TENANT_B);

  it("seals the agent's own ids for the caller, and unseals them for the same tenant", () => {
    const sealed = a.fromAgent('task-42');
    expect(sealed).toMatch(/^task-42\.[A-Za-z0-9_-]{22}$/);
    expect(a.toAgent(sealed)).toBe('task-42');
  });

  it("never lets another tenant's sealed id reach the agent as that id", () => {
    const sealed = a.fromAgent('task-42');
    expect(b.toAgent(sealed)).toBe(`${TENANT_B}:${sealed}`);
    expect(b.toAgent('task-42')).toBe(`${TENANT_B}:task-42`);
    // Another key seals differently, so a seal cannot be made without the key.
    expect(tenantIds('other', TENANT_A).toAgent(sealed)).toBe(`${TENANT_A}:${sealed}`);
  });

  it("puts the caller's own ids in its namespace, and takes them back out", () => {
    expect(a.toAgent('conversation-1')).toBe(`${TENANT_A}:conversation-1`);
    expect(a.fromAgent(`${TENANT_A}:conversation-1`)).toBe('conversation-1');
    expect(b.toAgent('conversation-1')).not.toBe(a.toAgent('conversation-1'));
  });

  it('keeps a seal that does not match (tampered, truncated, other characters) from unsealing', () => {
    const sealed = a.fromAgent('task-42');
    const tampered = `${sealed.slice(0, -1)}${sealed.endsWith('A') ? 'B' : 'A'}`;
    for (const id of [tampered, sealed.slice(0, -1), `${sealed.slice(0, -2)}é`, '.x', 'task-42.']) {
      expect(a.toAgent(id)).toBe(`${TENANT_A}:${id}`);
    }
  });
});
