// The barrier drawn as an arm on a post. The arm's angle is set by the
// card's `data-barrier` in styles.css and CSS transitions animate it between
// states (closed flat, opening/open raised, closing back down, fault stuck
// half way and red), so a state change costs no JavaScript animation.
import type { Barrier as BarrierState } from '../types';

export function Barrier({ state }: { state: BarrierState }) {
  return (
    <svg class="barrier" viewBox="0 0 120 64" role="img" aria-label={`barrier ${state}`}>
      <rect class="barrier-base" x="6" y="52" width="22" height="8" rx="2" />
      <rect class="barrier-post" x="12" y="18" width="10" height="36" rx="2" />
      <g class="barrier-arm">
        <rect x="17" y="20" width="98" height="7" rx="3.5" />
        <rect class="barrier-stripe" x="40" y="20" width="12" height="7" />
        <rect class="barrier-stripe" x="68" y="20" width="12" height="7" />
        <rect class="barrier-stripe" x="96" y="20" width="12" height="7" />
      </g>
      <circle class="barrier-hinge" cx="17" cy="23.5" r="4" />
    </svg>
  );
}
