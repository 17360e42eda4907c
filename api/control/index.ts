// Durable control commands (REVOKE, SET_ISSUER): the queue, a box's
// control sequence, the operations, the dispatcher, holds of a box under
// test, settlement by the box's answer, an operator's retry or skip.
//
// The feature's public face: another folder of api/ imports it only from
// here (eslint.config.js, `featureImportConfigs`).
export { ControlDispatcher } from './dispatcher.js';
export { BoxHolds, heldBy } from './holds.js';
export { intervene, type Intervention, listControlCommands } from './interventions.js';
export { type PendingControl, pendingControlOfBoxes, revokeSmartKey } from './operations.js';
export { type ControlBody, ControlCommandRepository, type ControlState } from './repository.js';
export { ControlSequences, MAX_CONTROL_SEQ } from './sequence.js';
export { ControlAnswers } from './settle.js';
