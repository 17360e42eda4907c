// JSON schemas of spec 2.5, 2.6 and 4.4 (responses and OpenAPI).

const isoTime = (description: string) =>
  ({
    type: 'string',
    description: `${description}; ISO 8601 with offset, e.g. 2026-06-01T08:00:00.000+00:00.`,
  }) as const;

export const smartKeySchema = {
  $id: 'SmartKey',
  type: 'object',
  description: 'A smart key (spec 2.6).',
  required: [
    'id',
    'secured_parking_id',
    'name',
    'description',
    'is_active',
    'type',
    'access_command',
    'is_online',
    'start_time',
    'end_time',
    'access_points',
  ],
  properties: {
    id: { type: 'integer', description: 'Also the key_id of its access command (ACCESS or ACCESS_SIGNED).' },
    secured_parking_id: { type: 'integer' },
    name: { type: 'string', description: 'The name of the secured parking.' },
    description: { type: ['string', 'null'] },
    is_active: { type: ['boolean', 'null'], description: 'True when the parking is active.' },
    type: { type: 'string', enum: ['session_access'] },
    access_command: {
      type: 'string',
      description:
        "Base64 of the command frame the phone sends to a box (docs/protocol.md, command frame): for a signed parking (the default) an ACCESS_SIGNED (kind 0x04) signed with the parking's issuer key (ECDSA P-256), its body in the clear; for a sealed parking (version 1 firmware) an ACCESS (kind 0x01) sealed under the parking key.",
    },
    is_online: {
      type: 'boolean',
      description: 'True when the parking opens only through the server; then access_command is unusable.',
    },
    start_time: isoTime('Start of validity (not_before)'),
    end_time: isoTime('End of validity (not_after)'),
    revoked_at: {
      type: ['string', 'null'],
      description: 'An addition to spec 2.6: when an operator revoked the key (it opens nothing since), else null.',
    },
    access_points: {
      type: 'array',
      items: {
        type: 'object',
        required: ['access_point'],
        properties: {
          access_point: {
            type: 'object',
            required: ['module_id', 'mac_address'],
            properties: {
              module_id: { type: 'integer' },
              mac_address: { type: 'string', description: 'AA:BB:CC:DD:EE:FF' },
            },
          },
        },
      },
    },
  },
} as const;

export const parkingSessionSchema = {
  $id: 'ParkingSession',
  type: 'object',
  description: 'A parking session (spec 2.5) plus payment_state.',
  required: [
    'id',
    'type',
    'state',
    'start_time',
    'end_time',
    'entrance_remaining_tries',
    'exit_remaining_tries',
    'payment_state',
  ],
  properties: {
    id: { type: 'integer' },
    type: { type: 'string', enum: ['pay_per_use'] },
    state: { type: 'string', enum: ['entering', 'active', 'exiting', 'finished'] },
    start_time: isoTime('Session start'),
    end_time: isoTime('End of the window; once ended (finalize or exit), the actual end'),
    entrance_remaining_tries: { type: 'integer' },
    exit_remaining_tries: { type: 'integer' },
    payment_state: {
      type: 'string',
      enum: ['pending', 'paid', 'declined'],
      description: 'paid once every payment of the session is paid.',
    },
  },
} as const;

const sessionBodyProperties = {
  pay_url: {
    type: 'string',
    description: 'Absolute URL under PUBLIC_URL; GET it in a web view to pay (the latest unpaid payment).',
  },
  amount: {
    type: 'string',
    description: "Decimal with 2 decimals: the window's price, or the final amount once ended.",
  },
  currency: { type: 'string' },
  parking_session: { $ref: 'ParkingSession#' },
  smart_key: { $ref: 'SmartKey#', description: 'The latest key of the session (after an overstay, the exit key).' },
} as const;

export const sessionResponseSchema = {
  $id: 'SessionResponse',
  type: 'object',
  description: 'Spec 4.4: pay_url, amount, currency, parking_session, smart_key.',
  required: ['pay_url', 'amount', 'currency', 'parking_session', 'smart_key'],
  properties: sessionBodyProperties,
} as const;

export const finalizeResponseSchema = {
  type: 'object',
  description:
    'The session body after finalize, plus extra_amount: what the driver owes beyond the payments made (pay it at pay_url).',
  required: ['pay_url', 'amount', 'currency', 'extra_amount', 'parking_session', 'smart_key'],
  properties: {
    ...sessionBodyProperties,
    extra_amount: { type: 'string', description: '2 decimals; "0.00" when nothing more is due.' },
  },
} as const;
