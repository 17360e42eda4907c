// GET /api/operator/boxes/:module_id/capture: what the capture ring keeps of
// one box's MQTT traffic (capture-ring.ts), as a pcapng file to open in
// Wireshark (docs/capture.md). `seconds` keeps only the last N seconds.
import type { FastifyInstance } from 'fastify';
import type { ApiConfig } from '../config/index.js';
import type { BoxRepository } from '../boxes/index.js';
import { ApiError } from '../http/errors.js';
import { errorResponses } from '../http/schemas.js';
import { typedRoutes } from '../http/typed-routes.js';
import type { CaptureRing } from './capture-ring.js';

/** No media type is registered for pcapng: IANA's application/vnd.tcpdump.pcap
 * names the older pcap format, which a reader would then expect. This is the
 * name the pcapng draft (draft-ietf-opsawg-pcapng) proposes and tools send. */
export const PCAPNG_MEDIA_TYPE = 'application/pcapng';

export interface CaptureRouteDeps {
  boxes: Pick<BoxRepository, 'findByModuleId'>;
  config: Pick<ApiConfig, 'captureRingSeconds'>;
}

/** The ring, and the section's `shb_userappl` (`parkbench <version> api`);
 * absent when the ring is off (CAPTURE_RING_SECONDS=0) or there is no MQTT. */
export interface CaptureSource {
  readonly ring: CaptureRing;
  readonly application: string;
}

const captureParams = {
  type: 'object',
  required: ['module_id'],
  properties: { module_id: { type: 'string', pattern: '^(0|[1-9][0-9]{0,9})$' } },
} as const;

export function operatorCaptureRoutes(
  instance: FastifyInstance,
  ctx: CaptureRouteDeps,
  source: CaptureSource | undefined,
): void {
  const app = typedRoutes(instance);
  const maxSeconds = ctx.config.captureRingSeconds;
  app.get(
    '/boxes/:module_id/capture',
    {
      schema: {
        tags: ['operator'],
        summary: "A box's recent MQTT traffic, as a pcapng capture (docs/capture.md)",
        security: [{ operator: [] }],
        params: captureParams,
        querystring: {
          type: 'object',
          properties: {
            seconds: {
              type: 'string',
              pattern: '^[0-9]{1,10}$',
              description: `Only the last this many seconds, 1 to CAPTURE_RING_SECONDS (${maxSeconds}); absent: all the ring keeps.`,
            },
          },
        },
        response: {
          200: {
            description:
              "A pcapng file: one interface (`mqtt:<broker>`), a packet a record, the box's command and response messages and the frames in them, oldest first; no packet when nothing is kept. Content-Disposition names it `box-<module_id>-<UTC time>.pcapng`.",
            content: { [PCAPNG_MEDIA_TYPE]: { schema: { type: 'string', format: 'binary' } } },
          },
          ...errorResponses(401, 422),
          403: { $ref: 'ErrorBody#', description: "operator_required: a driver's token." },
          404: { $ref: 'ErrorBody#', description: 'resource_not_found: no box with this module id.' },
          409: {
            $ref: 'ErrorBody#',
            description: 'operation_refused: the capture ring is off (CAPTURE_RING_SECONDS=0).',
          },
          503: {
            $ref: 'ErrorBody#',
            description: 'mqtt_unavailable: the API runs without MQTT, so it captures nothing.',
          },
        },
      },
    },
    async (request, reply) => {
      const moduleId = Number(request.params.module_id);
      const seconds = secondsOf(request.query.seconds, maxSeconds);
      if ((await ctx.boxes.findByModuleId(moduleId)) === undefined)
        throw new ApiError('resource_not_found', undefined, [
          { path: 'module_id', message: `no box with module id ${moduleId}` },
        ]);
      if (maxSeconds === 0)
        throw new ApiError('operation_refused', undefined, [
          { path: 'module_id', message: 'the capture ring is off (CAPTURE_RING_SECONDS=0)' },
        ]);
      if (source === undefined) throw new ApiError('mqtt_unavailable');
      const now = source.ring.nowMicros();
      const file = source.ring.capture(
        moduleId,
        source.application,
        seconds === undefined ? undefined : now - seconds * 1_000_000,
      );
      return (
        reply
          .type(PCAPNG_MEDIA_TYPE)
          .header('content-disposition', `attachment; filename="${captureFileName(moduleId, now)}"`)
          // A Buffer is sent as it is (fastify serializes no Buffer); the
          // schema's `string` is its OpenAPI type, `format: binary`.
          .send(file as unknown as string)
      );
    },
  );
}

function secondsOf(raw: string | undefined, maxSeconds: number): number | undefined {
  if (raw === undefined) return undefined;
  const seconds = Number(raw);
  if (seconds < 1 || seconds > maxSeconds)
    throw new ApiError('validation_failed', undefined, [
      {
        path: 'seconds',
        message:
          maxSeconds === 0
            ? 'the capture ring is off (CAPTURE_RING_SECONDS=0)'
            : `must be an integer from 1 to ${maxSeconds} (CAPTURE_RING_SECONDS)`,
      },
    ]);
  return seconds;
}

/** `box-9101-20260101T120000Z.pcapng`: the box, and when (UTC) the capture ends. */
export function captureFileName(moduleId: number, nowMicros: number): string {
  const stamp = new Date(Math.floor(nowMicros / 1000))
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `box-${moduleId}-${stamp}.pcapng`;
}
