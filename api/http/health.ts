// GET /health: 200 once the database is open and migrated (the app is not
// ready before that, so answering at all means both happened), naming the
// database in use, so two processes meant to share one can be seen to.
import type { FastifyInstance } from 'fastify';
import { databaseShown, type ApiConfig } from '../config/index.js';
import { CompiledOnce, type Store } from '../db/store.js';

/** Health reads the database only (either engine: the migrations table is both's). */
export interface HealthRouteDeps {
  store: Store;
  config: Pick<ApiConfig, 'databasePath' | 'databaseUrl'>;
}

export function healthRoutes(app: FastifyInstance, ctx: HealthRouteDeps): void {
  // Per request (a load balancer polls it): compiled once.
  const database = databaseShown(ctx.config);
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
            required: ['status', 'migrations', 'database'],
            properties: {
              status: { type: 'string', enum: ['ok'] },
              migrations: { type: 'integer', description: 'Schema migrations applied.' },
              database: {
                type: 'string',
                description:
                  "The database in use: the SQLite file's absolute path, or the PostgreSQL URL with its password masked (***).",
              },
            },
          },
        },
      },
    },
    async () => {
      const [row] = await migrations.run(ctx.store.kysely, []);
      // count(*) is an int8 on PostgreSQL: the pool parses it to a number (api/db/postgres-pool.ts).
      return { status: 'ok', migrations: row?.count ?? 0, database };
    },
  );
}
