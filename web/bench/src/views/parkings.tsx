// Each parking and its boxes as cards.
import type { ActionResult as Result, ParkingInfo } from '../store';
import type { Box, ConformanceRun } from '../types';
import { BoxCard, type BoxHandlers } from './box-card';

interface Props {
  parkings: readonly ParkingInfo[];
  boxes: ReadonlyMap<number, Box>;
  results: ReadonlyMap<string, Result>;
  runs: ReadonlyMap<number, ConformanceRun>;
  handlers: BoxHandlers;
}

export function Parkings({ parkings, boxes, results, runs, handlers }: Props) {
  if (parkings.length === 0) return <p class="empty">No parking yet.</p>;
  return (
    <>
      {parkings.map((parking) => (
        <section class="parking" key={parking.id} data-parking-id={parking.id} aria-label={`parking ${parking.id}`}>
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
                <BoxCard key={id} box={box} result={results.get(`box:${id}`)} run={runs.get(id)} handlers={handlers} />
              );
            })}
          </div>
        </section>
      ))}
    </>
  );
}
