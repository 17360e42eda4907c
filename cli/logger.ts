// The command line's logger: pino, readable on a terminal (pino-pretty),
// JSON lines otherwise. Logs go to stderr so stdout stays for results.
import { pino, type Logger, type LevelWithSilent } from 'pino';
import { UsageError } from './errors.js';

const LEVELS: readonly LevelWithSilent[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function parseLogLevel(raw: string): LevelWithSilent {
  const level = raw.trim().toLowerCase();
  if (!(LEVELS as readonly string[]).includes(level))
    throw new UsageError(`--log-level must be one of ${LEVELS.join(', ')}, got "${raw}"`);
  return level as LevelWithSilent;
}

export function createCliLogger(level: LevelWithSilent, name: string): Logger {
  if (process.stderr.isTTY) {
    return pino({
      name,
      level,
      transport: {
        target: 'pino-pretty',
        options: { destination: 2, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' },
      },
    });
  }
  return pino({ name, level }, pino.destination(2));
}
