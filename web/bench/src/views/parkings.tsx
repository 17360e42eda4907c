// Each parking and its boxes as cards. A parking's section renders again
// only when one of its own boxes, results or runs changed (ParkingSection's
// shouldComponentUpdate), so an update to one box of a 5,000-box fleet
// walks some 160 sections, not 5,000 cards. In a large fleet a section
// builds its cards' bodies once it comes near the viewport: the sections are
// observed (some 160 targets), not the cards (5,000 targets made chromium's
// intersection checks take 18 to 34 ms of a frame while logs streamed).
import { Component, createRef } from 'preact';
import type { ActionResult as Result, ParkingInfo } from '../store';
import type { Box, ConformanceRun } from '../types';
import { BoxCard, type BoxHandlers } from './box-card';
import { unwatch, watchNear } from './near-view';

interface Props {
  parkings: readonly ParkingInfo[];
  boxes: ReadonlyMap<number, Box>;
  results: ReadonlyMap<string, Result>;
  runs: ReadonlyMap<number, ConformanceRun>;
  handlers: BoxHandlers;
}

/** Above this many boxes, cards build their body only near the viewport. */
const LAZY_FROM = 200;

export function Parkings({ parkings, boxes, results, runs, handlers }: Props) {
  if (parkings.length === 0) return <p class="empty">No parking yet.</p>;
  const lazy = boxes.size > LAZY_FROM;
  return (
    <>
      {parkings.map((parking) => (
        <ParkingSection
          key={parking.id}
          parking={parking}
          boxes={boxes}
          results={results}
          runs={runs}
          handlers={handlers}
          lazy={lazy}
        />
      ))}
    </>
  );
}

interface SectionProps {
  parking: ParkingInfo;
  boxes: ReadonlyMap<number, Box>;
  results: ReadonlyMap<string, Result>;
  runs: ReadonlyMap<number, ConformanceRun>;
  handlers: BoxHandlers;
  lazy: boolean;
}

class ParkingSection extends Component<SectionProps, { near: boolean }> {
  override state = { near: !this.props.lazy };
  readonly #section = createRef<HTMLElement>();

  override componentDidMount(): void {
    const section = this.#section.current;
    if (!this.state.near && section !== null) watchNear(section, () => this.setState({ near: true }));
  }

  override componentWillUnmount(): void {
    const section = this.#section.current;
    if (section !== null) unwatch(section);
  }

  override shouldComponentUpdate(next: SectionProps, nextState: { near: boolean }): boolean {
    const now = this.props;
    if (nextState.near !== this.state.near) return true;
    if (next.parking !== now.parking || next.handlers !== now.handlers || next.lazy !== now.lazy) return true;
    return next.parking.boxIds.some(
      (id) =>
        (next.boxes !== now.boxes && next.boxes.get(id) !== now.boxes.get(id)) ||
        (next.results !== now.results && next.results.get(`box:${id}`) !== now.results.get(`box:${id}`)) ||
        (next.runs !== now.runs && next.runs.get(id) !== now.runs.get(id)),
    );
  }

  render() {
    const { parking, boxes, results, runs, handlers, lazy } = this.props;
    // A fleet that grows past LAZY_FROM keeps the bodies it built; a small one builds them all.
    const near = this.state.near || !lazy;
    return (
      <section ref={this.#section} class="parking" data-parking-id={parking.id} aria-label={`parking ${parking.id}`}>
        <h2>
          <span class="parking-name">{parking.name}</span>{' '}
          <span class="muted">
            #{parking.id} · {parking.access_mode} · {parking.boxIds.length} boxes
            {parking.is_online ? ' · online keys (opened through the server)' : ''}
          </span>
        </h2>
        <div class="cards">
          {parking.boxIds.map((id) => {
            const box = boxes.get(id);
            return box === undefined ? null : (
              <BoxCard
                key={id}
                box={box}
                result={results.get(`box:${id}`)}
                run={runs.get(id)}
                handlers={handlers}
                near={near}
              />
            );
          })}
        </div>
      </section>
    );
  }
}
