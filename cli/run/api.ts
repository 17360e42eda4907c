// `parkbench api`, once its configuration is read (commands/api.ts): listens
// on HOST:PORT; on SIGINT/SIGTERM stops accepting, lets requests in flight
// finish, closes the database and exits 0.
import { appLogger, type AppLoggerOptions } from '../../api/app-logger.js';
import type { ApiConfig } from '../../api/config/index.js';
import { DatabaseRefusedError } from '../../api/db/refused.js';
import type { MqttConnection } from '../../api/mqtt/mqtt-service.js';
import { createService, type Service } from '../../api/service.js';
import { CliError, ExitCode } from '../errors.js';
import { onShutdown } from '../signals.js';

/** How long shutdown may wait for requests in flight before giving up. */
const SHUTDOWN_GRACE_MS = 10_000;

function loggerOptions(config: ApiConfig): AppLoggerOptions {
  return {
    level: config.logLevel,
    // Readable on a terminal, JSON otherwise (files, log shippers, tests).
    ...(process.stdout.isTTY
      ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l' } } }
      : {}),
    redact: ['req.headers.authorization'],
  };
}

export interface ServeOptions {
  /** The embedded broker, or the external one to connect to (commands/api.ts mqttConnectionOf). */
  mqtt: MqttConnection;
  version: string;
  exitWithParent: boolean;
}

export async function serveApi(config: ApiConfig, { mqtt, version, exitWithParent }: ServeOptions): Promise<void> {
  // Listening for signals before anything says "listening": whoever waits for
  // that may signal at once. A signal during start-up stops the API once up.
  const stopping = onShutdown({ exitWithParent });
  let service: Service | undefined;
  try {
    service = await createService(config, {
      logger: appLogger(loggerOptions(config)),
      version,
      mqtt,
    });
    await service.app.listen({ host: config.host, port: config.port });
  } catch (error) {
    await service?.close();
    // A database it must not use is the operator's to fix, like a bad setting.
    if (error instanceof DatabaseRefusedError)
      throw new CliError(`cannot start the API: ${error.message}`, ExitCode.usage);
    throw new CliError(`cannot start the API: ${error instanceof Error ? error.message : String(error)}`);
  }
  const running = service.app;
  running.log.info(
    { dashboard_url: `${listeningUrl(running, config.host)}/bench` },
    'the bench page (log in with an operator token: parkbench admin operator add)',
  );
  const reason = await stopping;
  running.log.info({ reason }, 'stopping: finishing requests in flight');
  const timer = setTimeout(() => {
    running.log.error('requests still in flight after the grace period; exiting');
    process.exit(1);
  }, SHUTDOWN_GRACE_MS);
  timer.unref();
  // close() ends the connections idle now; a keep-alive connection whose
  // request was in flight goes idle later and would hold the server open
  // until its keep-alive timeout, so idle ones are swept until closed.
  const sweeper = setInterval(() => running.server.closeIdleConnections(), 50);
  try {
    await running.close();
    running.log.info('stopped');
  } catch (error) {
    running.log.error({ err: error }, 'error while stopping');
    process.exitCode = 1;
  } finally {
    clearInterval(sweeper);
  }
}

/** http://HOST:PORT with the port the server got (PORT 0 picks one). */
function listeningUrl(app: { server: { address(): unknown } }, host: string): string {
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null && 'port' in address ? String(address.port) : '';
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
