// The event stream's state, and a button to reconnect at once.
import type { Connection as State } from '../store';

export function Connection({ state, reconnect }: { state: State; reconnect: () => void }) {
  return (
    <div class="connection">
      <span class={`dot ${state}`} data-connection={state} role="status" aria-live="polite">
        {state === 'live' ? 'live' : 'reconnecting…'}
      </span>
      <button type="button" data-action="reconnect" onClick={reconnect}>
        Reconnect
      </button>
    </div>
  );
}
