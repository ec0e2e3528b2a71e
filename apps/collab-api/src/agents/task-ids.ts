import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IdBinding } from '../adapters/agents/index.js';

const SEAL_LENGTH = 22; // base64url characters: 132 bits of HMAC-SHA256

/**
 * Binds the task, context and session ids of a tenant's calls to agents to that tenant, so that
 * no tenant can continue or read another's task by sending its id:
 *
 * - An id the agent made (a task id; a context or session id it chose) reaches the caller sealed,
 *   `<agent's id>.<seal>`, the seal being an HMAC-SHA256 of the tenant and the id under `secret`
 *   (COLLAB_AGENT_ID_SECRET). Sent back by the same tenant, it goes to the agent unsealed.
 * - Every other id a caller sends (a context id of its own choosing, or another tenant's sealed
 *   id, whose seal does not match) goes to the agent in the caller's namespace, `<tenant id>:<id>`,
 *   and comes back without the prefix.
 *
 * So the same id from two tenants never reaches an agent as the same id, and no tenant can name
 * an agent's id of another tenant's task.
 */
export function tenantIds(secret: string, tenantId: string): IdBinding {
  const prefix = `${tenantId}:`;
  const seal = (id: string) =>
    createHmac('sha256', secret).update(`${tenantId}\0${id}`).digest('base64url').slice(0, SEAL_LENGTH);
  return {
    toAgent(id) {
      const dot = id.lastIndexOf('.');
      if (dot > 0 && id.length - dot - 1 === SEAL_LENGTH) {
        const agentId = id.slice(0, dot);
        const given = Buffer.from(id.slice(dot + 1));
        const expected = Buffer.from(seal(agentId));
        if (given.length === expected.length && timingSafeEqual(given, expected)) return agentId;
      }
      return `${prefix}${id}`;
    },
    fromAgent(id) {
      return id.startsWith(prefix) ? id.slice(prefix.length) : `${id}.${seal(id)}`;
    },
  };
}
