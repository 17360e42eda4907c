// Boxes: adding one with fresh keys, many at once, its provisioning file,
// its true availability (derived from MQTT, kept in the database), and the
// port through which a command is sent to it and its answer awaited.
//
// The feature's public face: another folder of api/ imports it only from
// here (eslint.config.js, `featureImportConfigs`).
export { addBox } from './add.js';
export { BoxAvailabilityStore } from './availability.js';
export type { BoxCommandSender, CommandOutcome } from './commands.js';
export {
  type AvailabilityValue,
  BoxAvailability,
  boxesOfGatewayState,
  type DerivedAvailability,
} from './derived-availability.js';
export { type BoxObservation, BoxRepository, type BoxRow, DEFAULT_SKEW_SECONDS } from './repository.js';
