// The store as a fastify plugin: opened (and migrated) when registered, on
// PostgreSQL when DATABASE_URL is set, else on the SQLite file; exposed as
// `app.store`; closed on `onClose`, after in-flight requests finish.
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { openStore, type StoreConfig } from './open-store.js';
import type { Store } from './store.js';

declare module 'fastify' {
  interface FastifyInstance {
    store: Store;
  }
}

export const databasePlugin = fp(
  async (app: FastifyInstance, options: { config: StoreConfig }) => {
    const store = await openStore(options.config, {
      maxConnections: options.config.databasePoolSize,
      // pg reports an idle connection's error (the server restarted, a proxy
      // closed it) on the pool; the pool drops it and the next query
      // reconnects, so it is worth a warning, not a crash.
      onIdleError: (error) => app.log.warn({ err: error }, 'an idle PostgreSQL connection failed; it is replaced'),
    });
    app.decorate<Store>('store', store);
    app.addHook('onClose', async () => {
      await store.close();
    });
  },
  { name: 'parkbench-database' },
);
