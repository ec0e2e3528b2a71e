/**
 * The address rules of @repo/net-guard (shared with inbox-api's webhooks), with refusals that name
 * the setting that allows private and loopback addresses here: COLLAB_AGENT_ALLOW_PRIVATE.
 */
import { type Refusal, refusalMessage as netGuardRefusalMessage } from '@repo/net-guard';

export {
  type AddressKind,
  type AddressPolicy,
  classifyAddress,
  type Refusal,
  refusedAddress,
  refusedHost,
} from '@repo/net-guard';

export function refusalMessage(subject: string, refusal: Refusal, consequence: string): string {
  return netGuardRefusalMessage(subject, refusal, consequence, 'COLLAB_AGENT_ALLOW_PRIVATE');
}
