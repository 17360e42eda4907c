// A box at risk: keys revoked at the service that it still takes (their
// REVOKE failed, REVOCATION_FULL most often, or was skipped), as the
// operator API lists them in `revocations_missing`, and its `remedy`. All
// of it is text from the API, rendered as JSX text.
import { dayTime } from '../format';
import type { Box } from '../types';

/** "1 revoked key still opens this box", "3 revoked keys still open this box". */
export function atRiskText(count: number): string {
  return count === 1 ? '1 revoked key still opens this box' : `${count} revoked keys still open this box`;
}

/** The card head's marker: shown only for a box at risk. */
export function AtRiskBadge({ box }: { box: Box }) {
  const count = box.revocations_missing.length;
  if (count === 0) return null;
  const text = atRiskText(count);
  return (
    <span class="badge risk" data-at-risk-badge title={text} aria-label={`at risk: ${text}`}>
      at risk
    </span>
  );
}

/** The keys and the remedy, in the card's body: nothing for a box at no risk. */
export function AtRisk({ box }: { box: Box }) {
  const missing = box.revocations_missing;
  if (missing.length === 0) return null;
  return (
    <section class="at-risk" data-at-risk aria-label={`revoked keys that still open box ${box.module_id}`}>
      <p class="at-risk-head">At risk: {atRiskText(missing.length)}</p>
      <ul class="missing">
        {missing.map((key) => (
          <li key={key.smart_key_id} data-missing-key={key.smart_key_id}>
            key {key.smart_key_id}, open until <time dateTime={key.open_until}>{dayTime(key.open_until)}</time>
            {key.last_error === null ? '' : `: ${key.last_error}`}
          </li>
        ))}
      </ul>
      {box.remedy !== null && (
        <p class="remedy" data-remedy>
          Remedy: {box.remedy}
        </p>
      )}
    </section>
  );
}
