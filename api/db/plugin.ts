// The database as a fastify plugin: opened and migrated when registered,
// exposed as `app.db`, closed on `onClose` (after in-flight requests finish).
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { openDatabase, type Db } from './open.js';

declare module 'fastify' {
  interface FastifyInstance {
    db: Db;
  }
}

export const databasePlugin = fp(
  (app: FastifyInstance, options: { path: string; busyTimeoutMs?: number }, done: (error?: Error) => void) => {
    let db: Db;
    try {
      db = openDatabase(
        options.path,
        options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs },
      );
    } catch (error) {
      done(error as Error);
      return;
    }
    app.decorate('db', db);
    app.addHook('onClose', (_instance, closed) => {
      db.close();
      closed();
    });
    done();
  },
  { name: 'parkbench-database' },
);
