// One IntersectionObserver for every parking section of a large fleet: a
// section learns when it comes within a screen or so of the viewport, and
// only then builds its cards' bodies and buttons (perf/dashboard.ts: 5,000
// full cards cost seconds of DOM building before the first paint).
const MARGIN = '1200px 0px';

const listeners = new Map<Element, () => void>();
let observer: IntersectionObserver | null = null;

function shared(): IntersectionObserver {
  observer ??= new IntersectionObserver(
    (entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        const listener = listeners.get(entry.target);
        if (listener === undefined) continue;
        // Once near, a card stays built: scrolling back and forth costs nothing more.
        unwatch(entry.target);
        listener();
      }
    },
    { rootMargin: MARGIN },
  );
  return observer;
}

/** Calls `onNear` once, when `element` first comes near the viewport. */
export function watchNear(element: Element, onNear: () => void): void {
  listeners.set(element, onNear);
  shared().observe(element);
}

export function unwatch(element: Element): void {
  if (!listeners.delete(element)) return;
  observer?.unobserve(element);
}
