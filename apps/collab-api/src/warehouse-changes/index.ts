export { applyChange, type ChangeDeps } from './apply.js';
export { resolveInterruptedChanges } from './interrupted.js';
export { type ChangePlan, nameKey } from './plan.js';
export { addChange, extendLease, inTurn, requireNameNotHeld, requireNoChangeUnderWay } from './record.js';
export { sweepWarehouse } from './sweep.js';
