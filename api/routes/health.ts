// GET /health: 200 once the database is open and migrated (the app is not
// ready before that, so answering at all means both happened).
import type { FastifyInstance } from 'fastify';
import { CompiledOnce, type Store } from '../db/store.js';

/** Health reads the database only (either engine: the migrations table is both's). */
export interface HealthRouteDeps {
  store: Store;
}

export function healthRoutes(app: FastifyInstance, ctx: HealthRouteDeps): void {
  // Per request (a load balancer polls it): compiled once.
  const migrations = new CompiledOnce(
    ctx.store.kysely.selectFrom('migrations').select((eb) => eb.fn.countAll<number>().as('count')),
  );
  app.get(
    '/health',
    {
      schema: {
        tags: ['service'],
        summary: 'Liveness and readiness',
        response: {
          200: {
            type: 'object',
            required: ['status', 'migrations'],
            properties: {
              status: { type: 'string', enum: ['ok'] },
              migrations: { type: 'integer', description: 'Schema migrations applied.' },
            },
          },
        },
      },
    },
    async () => {
      const [row] = await migrations.run(ctx.store.kysely, []);
      // count(*) is an int8 on PostgreSQL: the pool parses it to a number (api/db/postgres-pool.ts).
      return { status: 'ok', migrations: row?.count ?? 0 };
    },
  );
}
