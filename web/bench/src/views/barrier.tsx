// The barrier drawn as an arm on a post. The arm's angle is set by the
// card's `data-barrier` in styles.css and CSS transitions animate it between
// states (closed flat, opening/open raised, closing back down, fault stuck
// part way and dark red), so a state change costs no JavaScript animation.
// The view box leaves room above the post for the raised arm.
import type { Barrier as BarrierState } from '../types';

export function Barrier({ state }: { state: BarrierState }) {
  return (
    <svg class="barrier" viewBox="0 0 104 110" role="img" aria-label={`barrier ${state}`}>
      <rect class="barrier-base" x="4" y="102" width="22" height="6" rx="2" />
      <rect class="barrier-post" x="10" y="84" width="10" height="20" rx="2" />
      <g class="barrier-arm">
        <rect x="15" y="83" width="86" height="7" rx="3.5" />
        <rect class="barrier-stripe" x="34" y="83" width="11" height="7" />
        <rect class="barrier-stripe" x="58" y="83" width="11" height="7" />
        <rect class="barrier-stripe" x="82" y="83" width="11" height="7" />
      </g>
      <circle class="barrier-hinge" cx="15" cy="86.5" r="4" />
    </svg>
  );
}
