// Routes whose request types come from their JSON schemas: fastify's type
// provider for json-schema-to-ts reads a route's `as const` schemas (params,
// querystring, body, each response) and types `request.params`,
// `request.query`, `request.body` and what the handler may send, so no route
// writes a type beside its schema. Types only: validation (ajv) and
// serialization (fast-json-stringify) run on the same schemas.
import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';

/** The app as routes register on it, request types derived from schemas. */
export type TypedApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  JsonSchemaToTsProvider
>;

/** The same app, typed by its routes' schemas (no change at run time). */
export function typedRoutes(app: FastifyInstance): TypedApp {
  return app.withTypeProvider<JsonSchemaToTsProvider>();
}
