// Parkings: creating one with the keys of its access mode, and its record.
//
// The feature's public face: another folder of api/ imports it only from
// here (eslint.config.js, `featureImportConfigs`).
export { createParking, freshParkingKeys } from './create.js';
export { formatMinorUnits } from './money.js';
export { type AccessMode, ParkingRepository, type ParkingRow } from './repository.js';
