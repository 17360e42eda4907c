// Response schemas of the operator HTTP API (and so of its OpenAPI document).
import { Status } from '../../firmware-protocol/index.js';
import { DECIMAL_ID_PATTERN } from '../http/schemas.js';
import { reservationViewSchema } from '../reservations/index.js';

/** A type or null, literal so that the schema's type can be derived from it. */
const nullable = <T extends 'string' | 'integer'>(type: T) => ({ type: [type, 'null'] }) as const;

export const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', pattern: DECIMAL_ID_PATTERN, maxLength: 15 } },
} as const;

export const pendingControlSchema = {
  type: 'object',
  required: ['id', 'kind', 'purpose', 'attempts', 'last_status', 'last_error', 'created_at'],
  properties: {
    id: { type: 'integer' },
    kind: { type: 'string' },
    purpose: { type: 'string' },
    attempts: { type: 'integer' },
    last_status: nullable('string'),
    last_error: nullable('string'),
    created_at: { type: 'string' },
  },
} as const;

/** A box's last known state (api/boxes/status.ts boxStatuses). Fields that
 * service adds later pass through (additionalProperties). */
export const operatorBoxSchema = {
  type: 'object',
  additionalProperties: true,
  required: [
    'module_id',
    'direction',
    'simulated',
    'mac_address',
    'last_seen_at',
    'battery_mv',
    'box_time_drift_seconds',
    'last_box_seq',
    'pending_control_commands',
    'last_response',
    'reservation',
    'live',
    'availability',
    'availability_reason',
    'availability_since',
    'gateway_id',
    'revocations_missing',
    'remedy',
  ],
  properties: {
    module_id: { type: 'integer' },
    parking_id: { type: 'integer' },
    direction: { type: 'string' },
    simulated: {
      type: 'boolean',
      description:
        "True for a box parkbench's simulator plays (the demo's, a fleet's, one added with admin box add --simulated); false for hardware.",
    },
    mac_address: { type: 'string' },
    last_seen_at: {
      ...nullable('string'),
      description: 'ISO time of the last verified response; null before the first.',
    },
    battery_mv: { ...nullable('integer'), description: 'From the last verified response.' },
    box_time_drift_seconds: { ...nullable('integer'), description: 'Box clock minus service clock at that response.' },
    last_box_seq: nullable('integer'),
    last_control_seq: nullable('integer'),
    next_control_seq: { type: 'integer' },
    pending_control_commands: { type: 'array', items: pendingControlSchema },
    availability: {
      type: 'string',
      enum: ['online', 'offline', 'unknown'],
      description:
        'True availability: offline when the box said so or when the gateway it is reached through is offline; unknown before the API heard of it.',
    },
    availability_reason: {
      ...nullable('string'),
      description: 'Why it is offline, e.g. "gateway gw-bench-1 offline since 2026-11-23T12:00:00.000Z"; else null.',
    },
    availability_since: { ...nullable('string'), description: 'ISO time since when the API holds that value.' },
    gateway_id: {
      ...nullable('string'),
      description: 'The gateway the box is reached through; null for a box on MQTT itself or not known yet.',
    },
    revocations_missing: {
      type: 'array',
      description:
        'Smart keys revoked at the service that still open this box (its REVOKE failed, REVOCATION_FULL most often, or was skipped; the key is in its window; the box holds the issuer key that signed it): the box is at risk while this is not empty. Empty for a box at no risk.',
      items: {
        type: 'object',
        required: ['smart_key_id', 'open_until', 'last_error'],
        properties: {
          smart_key_id: { type: 'integer' },
          open_until: {
            type: 'string',
            description: "ISO time when the box stops taking the key by itself (the key's end plus the box's skew).",
          },
          last_error: { ...nullable('string'), description: 'Why its REVOKE did not reach the box.' },
        },
      },
    },
    remedy: {
      ...nullable('string'),
      description:
        'What the operator can do about revocations_missing, one sentence (a signed parking: rotate its issuer with `parkbench admin parking rotate-issuer --id N --re-sign`); null when the box is at no risk.',
    },
    live: {
      type: ['object', 'null'],
      description:
        'The newest state the box published on MQTT (parkbench/boxes/{id}/state, retained: the simulator, or the gateway for a real box), as published; null when never seen by this API process.',
      required: ['barrier', 'battery_mv', 'box_time', 'box_seq', 'faults', 'updated_at'],
      properties: {
        barrier: { type: 'string', enum: ['closed', 'opening', 'open', 'closing', 'fault'] },
        battery_mv: { type: 'integer' },
        box_time: { type: 'string' },
        box_seq: { type: 'integer' },
        faults: { type: 'array', items: { type: 'string' }, description: 'Active faults as published, e.g. "jam".' },
        updated_at: { type: 'string' },
      },
    },
    reservation: {
      oneOf: [{ type: 'null' }, reservationViewSchema],
      description:
        "Who holds the box (an operator's reservation, POST /api/operator/boxes/{module_id}/reservation), until when, and who waits for it; null while nobody holds it.",
    },
    last_response: {
      type: ['object', 'null'],
      description: 'The newest verified response of the box; null before the first.',
      properties: {
        box_log_id: { type: 'integer' },
        status: { type: ['string', 'null'] },
        barrier: { type: ['string', 'null'], enum: ['closed', 'opening', 'open', 'closing', 'fault', null] },
        via: {
          type: 'string',
          enum: ['http', 'mqtt'],
          description: 'http: uploaded by a phone; mqtt: from the box over MQTT.',
        },
        received_at: { type: 'string' },
      },
    },
  },
} as const;

export const operatorParkingSchema = {
  type: 'object',
  required: ['id', 'name', 'currency', 'price_per_hour', 'is_online', 'access_mode', 'boxes'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    description: nullable('string'),
    currency: { type: 'string' },
    price_per_hour: { type: 'string' },
    max_duration_minutes: { type: 'integer' },
    tries: { type: 'integer' },
    is_online: { type: 'boolean' },
    access_mode: { type: 'string', enum: ['sealed', 'signed'] },
    issuer_public_key: nullable('string'),
    issuer_previous_public_key: nullable('string'),
    issuer_next_public_key: nullable('string'),
    boxes: { type: 'array', items: operatorBoxSchema },
  },
} as const;

export const SESSION_STATES = ['entering', 'active', 'exiting', 'finished'] as const;

export const operatorSessionSchema = {
  type: 'object',
  required: [
    'id',
    'user_id',
    'email',
    'parking_id',
    'state',
    'start_time',
    'end_time',
    'amount',
    'currency',
    'ended_at',
    'first_name',
    'last_name',
    'smart_key_ids',
  ],
  properties: {
    id: { type: 'integer' },
    user_id: { type: 'integer' },
    email: { type: 'string' },
    first_name: { type: 'string', description: "The driver's first name (as registered: data, never markup)." },
    last_name: { type: 'string', description: "The driver's last name." },
    parking_id: { type: 'integer' },
    state: { type: 'string', enum: SESSION_STATES },
    start_time: { type: 'string' },
    end_time: { type: 'string' },
    entrance_remaining_tries: { type: 'integer' },
    exit_remaining_tries: { type: 'integer' },
    amount: { type: 'string', description: 'Due, in currency units (the whole window until the session ends).' },
    currency: { type: 'string' },
    ended_at: nullable('string'),
    smart_key_ids: {
      type: 'array',
      items: { type: 'integer' },
      description:
        'Every smart key of the session, oldest first, revoked ones too (POST /api/operator/smart_keys/:id/revoke each).',
    },
  },
} as const;

export const STATUS_NAMES = Object.keys(Status) as (keyof typeof Status)[];

export const operatorBoxLogSchema = {
  type: 'object',
  required: ['id', 'source', 'equipment_id', 'secured_parking_id', 'type', 'verified', 'status', 'received_at'],
  properties: {
    id: { type: 'integer' },
    source: { type: 'string', enum: ['http', 'mqtt'], description: 'How it reached the service.' },
    equipment_id: { type: 'integer', description: 'The box (module id).' },
    secured_parking_id: { type: 'integer' },
    fo_user_id: nullable('integer'),
    smart_key_id: nullable('integer'),
    session_id: { ...nullable('integer'), description: 'The session of its smart key, if any.' },
    key_purpose: {
      type: ['string', 'null'],
      enum: ['session', 'exit', 'operator', null],
      description:
        "What its smart key is for: session, exit, or operator (an operator's one-off ACCESS); null without a key.",
    },
    operator: {
      ...nullable('string'),
      description: "The operator who sent an operator key's ACCESS; null otherwise (or once that operator is removed).",
    },
    type: { type: 'string' },
    command: nullable('string'),
    response: nullable('string'),
    offline: { type: 'boolean' },
    created_at: { type: 'string' },
    verified: { type: 'boolean' },
    box_seq: nullable('integer'),
    status: {
      type: ['string', 'null'],
      enum: [...STATUS_NAMES, null],
      description: 'docs/protocol.md status name of the verified response; null when not verified.',
    },
    received_at: { type: 'string' },
  },
} as const;
