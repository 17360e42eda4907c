// String formats of the API's JSON schemas beyond ajv's own, given to
// fastify's ajv (app.ts), so that the schema the OpenAPI document shows is
// the check that runs.
import { parseCreatedAt } from './time.js';
import { SQL_TIME_FORMAT } from './schemas.js';

export const apiFormats = {
  [SQL_TIME_FORMAT]: { type: 'string', validate: (text: string) => parseCreatedAt(text) !== undefined },
} as const;
