// GET /health: 200 once the database is open and migrated (the app is not
// ready before that, so answering at all means both happened).
import type { FastifyInstance } from 'fastify';
import type { Db } from '../db/open.js';

/** Health reads the database only. */
export interface HealthRouteDeps {
  db: Db;
}

export function healthRoutes(app: FastifyInstance, ctx: HealthRouteDeps): void {
  const migrations = ctx.db.prepare<[], { count: number }>('SELECT count(*) AS count FROM migrations');
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
    () => ({ status: 'ok', migrations: migrations.get()?.count ?? 0 }),
  );
}
