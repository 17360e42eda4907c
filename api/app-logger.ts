// The API process's one pino logger: the HTTP app logs requests with it, and
// the MQTT side, the workers and the event relay log with its children (a
// component name each). The request logger prints URLs, the error logger
// messages and node's bytes of a bad request, the forwarding worker its URL:
// every secret query parameter in them (`?access_token=`, an event stream's
// `?ticket=`, ...) is printed `[redacted]` (log-redaction.ts).
import type { FastifyRequest } from 'fastify';
import { pino, type DestinationStream, type Logger as PinoLogger, type LoggerOptions } from 'pino';
import { redactedError, redactedUrlField, redactUrl } from './http/log-redaction.js';

/** pino's options (a level, a transport, ...), and the stream the lines go
 * to (stdout by default); false: no logging at all. */
export type AppLoggerOptions = false | (LoggerOptions & { stream?: DestinationStream });

/** The logger of `options`; undefined when they ask for none. */
export function appLogger(options: AppLoggerOptions | undefined): PinoLogger | undefined {
  if (options === false || options === undefined) return undefined;
  const { stream, ...pinoOptions } = options;
  const redacting: LoggerOptions = {
    // fastify's own default level when given logger options.
    level: 'info',
    ...pinoOptions,
    serializers: {
      ...pinoOptions.serializers,
      req: (request: FastifyRequest) => ({
        method: request.method,
        url: redactUrl(request.url),
        host: request.host,
        remoteAddress: request.ip,
        remotePort: request.socket.remotePort,
      }),
      err: redactedError,
      url: redactedUrlField,
    },
  };
  return stream === undefined ? pino(redacting) : pino(redacting, stream);
}
