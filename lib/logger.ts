// The logger a library takes: a library logs through the logger its
// caller hands it, and the apps own pino. pino's Logger satisfies it; tests pass silentLogger.

type LogMethod = (fields: object, message?: string) => void;

export interface Logger {
  debug: LogMethod;
  info: LogMethod;
  warn: LogMethod;
  error: LogMethod;
  child(bindings: object): Logger;
}

const nothing: LogMethod = () => undefined;

export const silentLogger: Logger = {
  debug: nothing,
  info: nothing,
  warn: nothing,
  error: nothing,
  child: () => silentLogger,
};
