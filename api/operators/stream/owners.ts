// Who each client of the event stream is for: the operator and the token it
// was opened with (its SHA-256; a ticket's is its operator's token when the
// ticket was taken). The stream sends an operator's data only while both
// still hold: `parkbench admin operator remove` deletes the operator and
// `parkbench start` replaces its token, each possibly in another process on
// the same database, so nothing in this process hears of it. The stream asks
// the store instead (api/events/stream.ts): the current token of every
// operator it serves, in one indexed read, after the reads of each flush that
// sends something and before it sends, and at least every OWNER_CHECK_MS on
// the injected clock when it sends nothing; a client whose operator is gone,
// or whose token was replaced, is ended there.

/** How often the stream checks its clients' operators when it has nothing to send, ms. */
export const OWNER_CHECK_MS = 2_000;

export interface StreamOwner {
  readonly operatorId: number;
  /** The SHA-256 of the token the stream was opened with. */
  readonly tokenHash: Buffer;
}

/** The current token hash of each of these operators still there (a removed one is absent). */
export type OperatorTokens = (operatorIds: readonly number[]) => Promise<ReadonlyMap<number, Buffer>>;

/** The owner's operator is still there, with the same token. */
export function stillHolds(owner: StreamOwner, current: ReadonlyMap<number, Buffer>): boolean {
  return current.get(owner.operatorId)?.equals(owner.tokenHash) ?? false;
}
