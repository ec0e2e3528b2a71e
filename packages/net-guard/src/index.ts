export {
  type AddressKind,
  type AddressPolicy,
  classifyAddress,
  type Refusal,
  refusalMessage,
  refusedAddress,
  refusedHost,
} from './addresses.js';
export {
  AddressRefusedError,
  addressChecker,
  addressRefusal,
  createGuardedAgent,
  type GuardedAgentOptions,
  type Resolve,
} from './guarded-agent.js';
