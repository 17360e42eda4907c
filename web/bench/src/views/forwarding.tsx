// Forwarding per parking (pending, delivered, dead) and its retry.
import type { ActionResult as Result, ParkingInfo } from '../store';
import type { ForwardingStatus } from '../types';
import { ActionResult } from './action-result';

interface Props {
  parkings: readonly ParkingInfo[];
  forwarding: ReadonlyMap<number, readonly ForwardingStatus[]>;
  results: ReadonlyMap<string, Result>;
  retry: (parkingId: number) => void;
}

const sum = (urls: readonly ForwardingStatus[], field: 'pending' | 'delivered' | 'dead') =>
  urls.reduce((total, url) => total + (url[field] || 0), 0);

export function Forwarding({ parkings, forwarding, results, retry }: Props) {
  // Parkings that forward, and the first few others (a 5,000-box fleet has many parkings).
  const shown = parkings.filter((parking) => (forwarding.get(parking.id) ?? []).length > 0);
  return (
    <section class="panel" aria-labelledby="forwarding-title">
      <h2 id="forwarding-title">Forwarding</h2>
      {shown.length === 0 ? (
        <p class="empty">No parking forwards its box logs.</p>
      ) : (
        <table class="forwarding">
          <thead>
            <tr>
              <th scope="col">Parking</th>
              <th scope="col">Pending</th>
              <th scope="col">Delivered</th>
              <th scope="col">Dead</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((parking) => {
              const urls = forwarding.get(parking.id) ?? [];
              const error = urls.find((url) => url.last_error !== null && url.last_error !== undefined)?.last_error;
              return (
                <tr key={parking.id} data-forwarding-parking-id={parking.id}>
                  <td class="wrap">
                    {parking.name}
                    {error !== null && error !== undefined && <span class="muted"> · {error}</span>}
                  </td>
                  <td>{sum(urls, 'pending')}</td>
                  <td>{sum(urls, 'delivered')}</td>
                  <td>{sum(urls, 'dead')}</td>
                  <td>
                    <button type="button" data-action="forwarding-retry" onClick={() => retry(parking.id)}>
                      Retry
                    </button>
                    <ActionResult result={results.get(`forwarding:${parking.id}`)} />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
