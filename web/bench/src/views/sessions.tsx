// The sessions of the day: state, tries left, payment, and revoking their
// smart keys; the newest 200 of them, saying so when the day has more.
import { clockTime } from '../format';
import type { ActionResult as Result } from '../store';
import type { Session } from '../types';
import { ActionResult } from './action-result';

interface Props {
  sessions: ReadonlyMap<number, Session>;
  /** The sessions of the day, shown or not. */
  total: number;
  sessionKeys: ReadonlyMap<number, readonly number[]>;
  results: ReadonlyMap<string, Result>;
  revoke: (sessionId: number, smartKeyIds: readonly number[]) => void;
}

export function Sessions({ sessions, total, sessionKeys, results, revoke }: Props) {
  const rows = [...sessions.values()].sort((a, b) => b.id - a.id);
  const cut = total > rows.length;
  return (
    <section class="panel" aria-labelledby="sessions-title" data-sessions-total={total}>
      <h2 id="sessions-title">Sessions of the day</h2>
      {cut && (
        <p class="muted" data-sessions-cut>
          The newest {rows.length.toLocaleString('en')} of {total.toLocaleString('en')} sessions of the day.
        </p>
      )}
      {rows.length === 0 ? (
        <p class="empty">No session today.</p>
      ) : (
        <div class="scroll">
          <table class="sessions">
            <thead>
              <tr>
                <th scope="col">Session</th>
                <th scope="col">Driver</th>
                <th scope="col">State</th>
                <th scope="col">Tries left</th>
                <th scope="col">Payment</th>
                <th scope="col">Action</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((session) => {
                // The session's own keys; those its box logs named, from a server that sends none.
                const keys =
                  session.smart_key_ids.length > 0 ? session.smart_key_ids : (sessionKeys.get(session.id) ?? []);
                const name = `${session.first_name} ${session.last_name}`.trim();
                return (
                  <tr key={session.id} data-session-id={session.id} data-state={session.state}>
                    <td>
                      #{session.id}{' '}
                      <span class="muted">
                        P{session.parking_id} · {clockTime(session.start_time)}
                      </span>
                    </td>
                    <td class="wrap" data-driver>
                      {name === '' ? session.email : name}
                      {name !== '' && <span class="muted"> · {session.email}</span>}
                    </td>
                    <td>{session.state}</td>
                    <td>
                      in {session.entrance_remaining_tries ?? '-'} · out {session.exit_remaining_tries ?? '-'}
                    </td>
                    <td>
                      {session.amount} {session.currency}
                    </td>
                    <td>
                      <button
                        type="button"
                        data-action="revoke"
                        disabled={session.state === 'finished'}
                        onClick={() => revoke(session.id, keys)}
                      >
                        Revoke keys
                      </button>
                      <ActionResult result={results.get(`session:${session.id}`)} />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
