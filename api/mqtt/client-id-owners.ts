// Which account holds each MQTT client id. aedes keys sessions by
// client id alone: an account connecting with another's id would take over
// its stored session (subscriptions and queued messages, `sessionPresent`)
// or kick its live connection [MQTT-3.1.4-2]. The broker refuses such a
// CONNECT instead (return code 2, identifier rejected).
//
// An id is held while a connection of its account uses it, and after that as
// long as aedes keeps a session for it: the last connection was clean=false.
// Any account may use an id nobody holds. Sessions live in the broker's
// memory, so this does too.

interface Holding {
  readonly username: string;
  /** Connections of the account logged in with this id, still open. */
  connections: number;
  /** aedes may keep a session for the id (a clean=false connection came). */
  session: boolean;
}

export class ClientIdOwners {
  readonly #holdings = new Map<string, Holding>();

  /** A connection of `username` logs in with `clientId`: false when another
   * account holds the id. On true, `left` must follow when it closes. */
  claim(clientId: string, username: string, clean: boolean): boolean {
    const holding = this.#holdings.get(clientId);
    if (holding !== undefined && holding.username !== username) return false;
    if (holding === undefined) this.#holdings.set(clientId, { username, connections: 1, session: !clean });
    else {
      holding.connections++;
      if (!clean) holding.session = true;
    }
    return true;
  }

  /** A clean=true connection is in: aedes has dropped the id's stored session. */
  sessionCleared(clientId: string, username: string): void {
    const holding = this.#holdings.get(clientId);
    if (holding?.username === username) holding.session = false;
  }

  /** A connection that claimed the id has closed. */
  left(clientId: string, username: string): void {
    const holding = this.#holdings.get(clientId);
    if (holding?.username !== username) return;
    holding.connections--;
    if (holding.connections <= 0 && !holding.session) this.#holdings.delete(clientId);
  }

  /** Ids held, for tests and counters. */
  get size(): number {
    return this.#holdings.size;
  }
}
