// How many boxes a parking holds and a fleet call makes. Apart from the
// store, so the command line's help states them without loading it.

/** docs/protocol.md, Command frame: an ACCESS frame lists at most 32 modules, so a parking holds at most 32 boxes. */
export const MAX_BOXES_PER_PARKING = 32;

/** The largest fleet one call makes. */
export const MAX_FLEET = 100_000;
