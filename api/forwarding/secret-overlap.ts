// How long a forwarding secret a rotation replaced keeps signing. Apart from
// the parking's settings, so the command line's help states it without
// loading the store.

/** Hours a replaced secret keeps signing after a rotation, by default. */
export const DEFAULT_OVERLAP_HOURS = 24;
/** Longest overlap: a receiver that has not switched in a month has been forgotten. */
export const MAX_OVERLAP_HOURS = 720;
