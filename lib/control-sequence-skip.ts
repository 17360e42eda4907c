// Where a sender's control sequence goes after a box answered REPLAY
// (docs/protocol.md, step 6 and "What an answer proves"): the box had
// accepted that sequence or a higher one, from another sender, by how much
// is unknown. The service's dispatcher and the conformance suite both skip
// by this rule.

/**
 * Where the sequence goes after the `replays`-th REPLAY (1, 2, 3) of
 * `refused`. The conformance suite's default sequence is the Unix time in
 * seconds, so the first skip goes past now; later ones jump 2^24 and 2^28
 * past the refused one. The caller gives up after MAX_REPLAYS (bounded).
 */
export function sequenceAfterReplay(refused: number, replays: number, nowMs: number): number {
  if (replays <= 1) return Math.max(refused + 1_000, Math.floor(nowMs / 1000) + 1);
  return refused + (replays === 2 ? 2 ** 24 : 2 ** 28);
}

/** REPLAY answers taken before a sender gives up. */
export const MAX_REPLAYS = 3;
