// The JSON schema of the bench file (docs/bench.md, The bench file), checked
// with ajv when the file is loaded. The shape is checked here, key by key
// (no key the schema does not name, every value of its type); what needs
// more than a shape (the provisioning file read, exactly one link, a MAC
// address, a URL, an environment variable) is checked by bench-file.ts. The
// `description` of a pattern is what its error says a value must be.

const timeMs = (max: number) => ({ type: 'integer', minimum: 0, maximum: max }) as const;

/** Keys every power entry may have besides its driver's own. */
const commonPower = {
  settle_ms: timeMs(600_000),
  off_ms: timeMs(600_000),
  timeout_ms: { type: 'integer', minimum: 1, maximum: 600_000 },
} as const;

const powerDriver = (driver: string, properties: Record<string, unknown>, required: readonly string[]) => ({
  type: 'object',
  properties: { driver: { const: driver }, ...commonPower, ...properties },
  required: ['driver', ...required],
  additionalProperties: false,
});

const shellLine = { type: 'string', minLength: 1 } as const;

/** A `password_env`: the name of an environment variable, never the secret. */
const ENV_NAME = {
  type: 'string',
  pattern: '^[A-Za-z_][A-Za-z0-9_]*$',
  description: 'the name of an environment variable (letters, digits, underscores)',
} as const;

export const POWER_DRIVERS = ['command', 'usbrelay', 'uhubctl', 'http', 'prompt'] as const;

export const benchSchema = {
  type: 'object',
  properties: {
    boxes: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        properties: {
          module_id: { type: 'integer', minimum: 0, maximum: 0xffff_ffff },
          provisioning: { type: 'string', minLength: 1 },
          link: {
            type: 'object',
            properties: {
              serial: { type: 'string', minLength: 1 },
              baud: { type: 'integer', minimum: 1 },
              ble: { type: 'string' },
              mqtt: { type: 'string' },
              username: { type: 'string', minLength: 1 },
              password_env: ENV_NAME,
              topic_prefix: { type: 'string', minLength: 1 },
            },
            additionalProperties: false,
          },
          power: {
            type: 'object',
            discriminator: { propertyName: 'driver' },
            required: ['driver'],
            oneOf: [
              powerDriver('command', { on: shellLine, off: shellLine, cycle: shellLine }, ['on', 'off']),
              powerDriver(
                'usbrelay',
                {
                  relay: {
                    type: 'string',
                    pattern: '^[A-Za-z0-9]+_[0-9]+$',
                    description: "a relay as usbrelay lists it, the board's serial and the relay's number (HURTM_1)",
                  },
                },
                ['relay'],
              ),
              powerDriver(
                'uhubctl',
                {
                  hub: {
                    type: 'string',
                    pattern: '^[0-9]+(-[0-9]+(\\.[0-9]+)*)?$',
                    description: 'a hub location as uhubctl lists it (1-1, 2-1.4)',
                  },
                  port: { type: 'integer', minimum: 1, maximum: 255 },
                },
                ['hub', 'port'],
              ),
              powerDriver(
                'http',
                {
                  url: { type: 'string', minLength: 1 },
                  api: { enum: ['shelly', 'tasmota'] },
                  switch: { type: 'integer', minimum: 0, maximum: 32 },
                  password_env: ENV_NAME,
                },
                ['url', 'api'],
              ),
              powerDriver('prompt', {}, []),
            ],
          },
          labels: {
            type: 'object',
            additionalProperties: { type: ['string', 'number', 'boolean'] },
          },
          limits: { type: 'array', items: { type: 'string' } },
        },
        required: ['module_id', 'provisioning', 'link'],
        additionalProperties: false,
      },
    },
  },
  required: ['boxes'],
  additionalProperties: false,
} as const;
