// Reservations of a box: an operator takes it for a while (a CI job, a
// person at the bench), others wait in a first-come queue; while it is
// held, the routes that drive the box want the holder's token and the
// service's own control commands wait.
//
// The feature's public face: another folder of api/ imports it only from
// here (eslint.config.js, `featureImportConfigs`).
export { BOX_RESERVED_409, guardReservation, RESERVATION_HEADER, type ReservationGuardDeps } from './guard.js';
export { boxReserved, reservationSentence } from './refusal.js';
export { ReservationRows } from './repository.js';
export { Reservations } from './reservations.js';
export { reservationRoutes, type ReservationRouteDeps } from './routes.js';
export { type ReservationRow, reservationViewSchema, type ReservationView, viewOf } from './view.js';
