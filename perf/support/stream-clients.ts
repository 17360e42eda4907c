// Clients of the operator event stream for perf:ingest: real SSE
// connections (GET /api/operator/events with the operator's bearer token),
// each reading every byte as a page would and counting its messages by
// event name (a blank line ends a message; the `event:` line names it).
import { request, type ClientRequest } from 'node:http';

export interface StreamClients {
  /** Messages received by each client, by event name, and bytes. */
  summary(): string;
  close(): void;
}

export async function attachStreamClients(base: string, token: string, count: number): Promise<StreamClients> {
  const requests: ClientRequest[] = [];
  const counts = Array.from({ length: count }, () => ({ bytes: 0, byEvent: new Map<string, number>() }));
  await Promise.all(
    counts.map(
      (tally) =>
        new Promise<void>((resolve, reject) => {
          const req = request(
            new URL('/api/operator/events', base),
            { headers: { accept: 'text/event-stream', authorization: `Bearer ${token}` } },
            (response) => {
              if (response.statusCode !== 200) {
                reject(new Error(`event stream: HTTP ${response.statusCode ?? 0}`));
                return;
              }
              response.setEncoding('utf8');
              let rest = '';
              response.on('data', (chunk: string) => {
                tally.bytes += chunk.length;
                rest += chunk;
                let end = rest.indexOf('\n\n');
                while (end !== -1) {
                  const name = /^event: (.+)$/m.exec(rest.slice(0, end))?.[1];
                  if (name !== undefined) tally.byEvent.set(name, (tally.byEvent.get(name) ?? 0) + 1);
                  rest = rest.slice(end + 2);
                  end = rest.indexOf('\n\n');
                }
              });
              response.on('error', () => undefined);
              // Attached once the snapshot arrived.
              const ready = (): void => {
                if (tally.byEvent.has('snapshot')) resolve();
                else setTimeout(ready, 10);
              };
              ready();
            },
          );
          req.on('error', reject);
          req.end();
          requests.push(req);
        }),
    ),
  );
  return {
    summary: () =>
      counts
        .map(
          (tally, index) =>
            `client ${index + 1}: ${[...tally.byEvent].map(([name, n]) => `${n} ${name}`).join(', ')}, ${(tally.bytes / 1e6).toFixed(1)} MB`,
        )
        .join('; '),
    close: () => {
      for (const req of requests) req.destroy();
    },
  };
}
