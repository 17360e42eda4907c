// The bench page's payload types (web/bench/src/types.ts) against what the
// operator API sends. The page writes its types out because it runs in a
// browser and imports nothing of the Node code; this file, checked by
// `npm run typecheck` (tsconfig.json includes test/), fails to compile when
// the two drift:
// - a field the page reads that the API does not send, or sends with another
//   type: each API payload type must be one of the page's (`Reads`). Those
//   payload types are what the routes return, which fastify's type provider
//   checks against the routes' response schemas (api/typed-routes.ts);
// - a field the page declares that the API's response schema does not have
//   (`Declares`; not for box logs, whose stream items add via and latency_ms
//   to GET /api/operator/box_logs's).
import type { Snapshot as SentSnapshot } from '../../api/operators/stream/render.js';
import type { ControlDelivery as SentControlDelivery } from '../../api/events/types.js';
import type { ConformanceRunView } from '../../api/conformance-runs/run-view.js';
import type { forwardingStatusResponse } from '../../api/operators/action-routes.js';
import type { conformanceRunSchema } from '../../api/conformance-runs/routes.js';
import type { operatorBoxSchema, operatorParkingSchema, operatorSessionSchema } from '../../api/operators/schemas.js';
import type { Comparison, RunResultView, RunView, RunWithResults } from '../../api/runs/index.js';
import type { RunPage } from '../../api/runs/runs.js';
import type { ReservationView, reservationViewSchema } from '../../api/reservations/index.js';
import type { runResultSchema, runWithResultsSchema } from '../../api/runs/schemas.js';
import type * as Page from '../../web/bench/src/types.js';

/** Compiles only when every `Sent` is a `Read`: the page can read what the API sends. */
type Reads<Read, Sent extends Read> = [Read, Sent];

/** Compiles only when the page declares no field the schema lacks. */
type Declares<Read, Schema extends { properties: object }> = [Exclude<keyof Read, keyof Schema['properties']>] extends [
  never,
]
  ? Read
  : { fieldsTheSchemaLacks: Exclude<keyof Read, keyof Schema['properties']> };

/** Compiles only when `Checked` is `true`-like: the result of `Declares` is the page type itself. */
type Holds<Read, Checked extends Read> = Checked;

type SentParking = SentSnapshot['parkings'][number];

export type PagePayloadContract = [
  Reads<Page.Snapshot, SentSnapshot>,
  Reads<Page.Parking, SentParking>,
  Reads<Page.Box, SentParking['boxes'][number]>,
  Reads<Page.Session, SentSnapshot['sessions'][number]>,
  Reads<Page.BoxLog, SentSnapshot['box_logs'][number]>,
  Reads<Page.ForwardingStatus, SentSnapshot['forwarding'][number]>,
  Reads<Page.ConformanceRun, ConformanceRunView>,
  Reads<Page.ControlDelivery, SentControlDelivery>,
  Reads<Page.RunView, RunView>,
  Reads<Page.RunView, RunWithResults>,
  Reads<Page.RunResultView, RunResultView>,
  Reads<Page.RunPage, RunPage>,
  Reads<Page.RunComparison, Comparison>,
  Reads<Page.Reservation, ReservationView>,
  Reads<Page.Reservation | null, SentParking['boxes'][number]['reservation']>,
  Holds<Page.Box, Declares<Page.Box, typeof operatorBoxSchema>>,
  Holds<Page.Parking, Declares<Page.Parking, typeof operatorParkingSchema>>,
  Holds<Page.Session, Declares<Page.Session, typeof operatorSessionSchema>>,
  Holds<Page.ConformanceRun, Declares<Page.ConformanceRun, typeof conformanceRunSchema>>,
  Holds<Page.Reservation, Declares<Page.Reservation, typeof reservationViewSchema>>,
  Holds<Page.RunView, Declares<Page.RunView, typeof runWithResultsSchema>>,
  Holds<Page.RunResultView, Declares<Page.RunResultView, typeof runResultSchema>>,
  Holds<Page.ForwardingStatus, Declares<Page.ForwardingStatus, (typeof forwardingStatusResponse)['items']>>,
];
