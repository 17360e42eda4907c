// The flags of `parkbench reserve` and `release`, checked before the
// service is called: the box's module_id, the times (30m, 90s, 2h, 1h30m,
// as `soak --duration` reads them), the note, and the service's settings.
// Any problem is a UsageError: one line, exit 2.
import { DurationError, parseDuration } from '../../soak/duration.js';
import { UsageError } from '../errors.js';
import { serviceSettings, type ServiceFlags, type ServiceSettings } from './flags.js';

export interface ReserveFlags extends ServiceFlags {
  box?: string;
  ttl?: string;
  wait?: string;
  note?: string;
  json?: boolean;
  /** The reservation to renew (else --reservation, else $PARKBENCH_RESERVATION). */
  token?: string;
}

export interface ReleaseFlags extends ServiceFlags {
  box?: string;
  token?: string;
}

export interface ReserveCall {
  readonly moduleId: number;
  readonly ttlSeconds: number;
  readonly waitSeconds: number;
  readonly note: string | undefined;
  readonly json: boolean;
  readonly service: ServiceSettings;
}

/** The service's bounds: a reservation of one second to a day, a wait of up to an hour. */
const MAX_TTL_SECONDS = 86_400;
const MAX_WAIT_SECONDS = 3_600;
const MAX_NOTE_LENGTH = 200;

export function reserveRequest(flags: ReserveFlags, env: NodeJS.ProcessEnv): ReserveCall {
  const moduleId = moduleIdOf(flags.box);
  if (flags.ttl === undefined) throw new UsageError('--ttl is required: how long to hold the box (30m, 2h, 1h30m)');
  const ttlSeconds = secondsOf('--ttl', flags.ttl, MAX_TTL_SECONDS);
  const waitSeconds =
    flags.wait === undefined || flags.wait.trim() === '0' ? 0 : secondsOf('--wait', flags.wait, MAX_WAIT_SECONDS);
  const note = flags.note;
  if (note !== undefined && note.length > MAX_NOTE_LENGTH)
    throw new UsageError(`--note is at most ${MAX_NOTE_LENGTH} characters, got ${note.length}`);
  const service = serviceSettings({ ...flags, reservation: flags.token ?? flags.reservation }, env, 'reserve');
  return { moduleId, ttlSeconds, waitSeconds, note, json: flags.json === true, service };
}

export function releaseRequest(
  flags: ReleaseFlags,
  env: NodeJS.ProcessEnv,
): { readonly moduleId: number; readonly service: ServiceSettings & { readonly reservation: string } } {
  const moduleId = moduleIdOf(flags.box);
  const service = serviceSettings({ ...flags, reservation: flags.token ?? flags.reservation }, env, 'release');
  const reservation = service.reservation;
  if (reservation === undefined)
    throw new UsageError("release needs the reservation's token: --token T or $PARKBENCH_RESERVATION");
  return { moduleId, service: { ...service, reservation } };
}

function moduleIdOf(raw: string | undefined): number {
  if (raw === undefined) throw new UsageError("--box is required: the box's module_id");
  const value = Number(raw.trim());
  if (!/^\d+$/.test(raw.trim()) || value > 0xffffffff)
    throw new UsageError(`--box must be a module_id (an integer from 0 to 4294967295), got "${raw}"`);
  return value;
}

/** Whole seconds (rounded up) of a duration, from 1 to `max`. */
function secondsOf(flag: string, raw: string, max: number): number {
  let ms: number;
  try {
    ms = parseDuration(raw);
  } catch (error) {
    if (error instanceof DurationError) throw new UsageError(`${flag}: ${error.message}`);
    throw error;
  }
  const seconds = Math.ceil(ms / 1000);
  if (seconds > max) throw new UsageError(`${flag} is at most ${max} s (${max / 3600} h), got "${raw}"`);
  return seconds;
}
