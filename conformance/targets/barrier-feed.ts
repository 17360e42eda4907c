// The barrier states a target has seen, handed to listeners; a listener that
// comes late (the suite starts after the link opened, when the first status
// report or the retained state may already be in) gets the last one first.
import type { BarrierObservation } from '../box-target.js';

export class BarrierFeed {
  readonly #listeners: ((observation: BarrierObservation) => void)[] = [];
  #last: BarrierObservation | undefined;

  push(observation: BarrierObservation): void {
    this.#last = observation;
    for (const listener of this.#listeners) listener(observation);
  }

  listen(listener: (observation: BarrierObservation) => void): void {
    this.#listeners.push(listener);
    if (this.#last !== undefined) listener(this.#last);
  }
}
