// Where an action's result shows: in the card or row whose button ran it.
import type { ActionResult as Result } from '../store';

export function ActionResult({ result }: { result: Result | undefined }) {
  if (result === undefined) return null;
  return (
    <p class={`action-result ${result.outcome}`} data-action-result data-outcome={result.outcome} role="status">
      {result.text}
    </p>
  );
}
