// `parkbench admin parking create|show|forwarding`.
import type { Command } from 'commander';
import type { ForwardingSetting } from '../../api/forwarding/parking-settings.js';
import { DEFAULT_OVERLAP_HOURS, MAX_OVERLAP_HOURS } from '../../api/forwarding/secret-overlap.js';
import { ACCESS_MODES, DEFAULT_ACCESS_MODE } from '../../api/parkings/access-modes.js';
import type { ParkingInput } from '../../api/parkings/create.js';
import { formatMinorUnits } from '../../api/parkings/money.js';
import type { AccessMode } from '../../api/parkings/repository.js';
import { UsageError } from '../errors.js';
import {
  printResult,
  withCommonFlags,
  withDatabase,
  withReadOnlyDatabase,
  type AdminContext,
  type CommonFlags,
} from './context.js';
import {
  parseAccessMode,
  parseBoolean,
  parseCurrency,
  parseHttpUrl,
  parseId,
  parseMaxDuration,
  parseName,
  parsePrice,
  parseTries,
} from './validate.js';

export type NewParkingInput = ParkingInput;

/** The output of `parking create` (text and --json): the issuer's private key is never in it. */
export interface CreatedParking {
  id: number;
  name: string;
  currency: string;
  price_per_hour: string;
  max_duration_minutes: number;
  tries: number;
  is_online: boolean;
  access_mode: AccessMode;
  /** K_park (32 hex digits) of a sealed parking; null for a signed one. */
  parking_key: string | null;
  /** X || Y (128 hex digits) of a signed parking; null for a sealed one. */
  issuer_public_key: string | null;
}

/** Creates the parking and returns the row the command prints. */
async function createParkingRow(
  ctx: AdminContext,
  input: NewParkingInput,
  accessMode: AccessMode = DEFAULT_ACCESS_MODE,
): Promise<CreatedParking> {
  const { createParking } = await import('../../api/parkings/create.js');
  const created = await createParking(ctx.store, input, accessMode, ctx.now);
  return {
    id: created.id,
    name: input.name,
    currency: input.currency,
    price_per_hour: formatMinorUnits(input.pricePerHourMinor),
    max_duration_minutes: input.maxDurationMinutes,
    tries: input.tries,
    is_online: input.isOnline,
    access_mode: created.accessMode,
    parking_key: created.parkingKey,
    issuer_public_key: created.issuerPublicKey,
  };
}

const CREATED_NOTE: Record<AccessMode, string> = {
  signed: "Its boxes get the issuer's public key through `box provision`; the private key never leaves the database.",
  sealed: 'The parking key goes to its boxes only, through `box provision`.',
};

interface CreateFlags extends CommonFlags {
  name: string;
  currency: string;
  pricePerHour: string;
  maxDurationMinutes: string;
  tries: string;
  online?: boolean;
  description?: string;
  access: string;
}

interface ShowFlags extends CommonFlags {
  id: string;
}

interface ForwardingFlags extends CommonFlags {
  parking: string;
  url?: string;
  expose?: string;
  forwardUnverified?: string;
  rotateSecret?: boolean;
  overlapHours?: string;
}

/** What `admin parking forwarding` says under its fields. */
function forwardingNote(setting: ForwardingSetting): string {
  const signed =
    'Deliveries follow Standard Webhooks 1.0 (webhook-id, webhook-timestamp, webhook-signature): verify them with a Standard Webhooks library.';
  if (setting.forwarding_secret === null)
    return `${signed} The secret is unchanged and not shown again (--rotate-secret issues a new one).`;
  const overlap =
    setting.previous_secret_until === null
      ? ''
      : ` The previous secret signs too until ${setting.previous_secret_until}.`;
  return `${signed} The secret is shown this once: give it to the receiver now.${overlap}`;
}

export function registerParkingCommands(admin: Command): void {
  const group = admin.command('parking').description('secured parkings');
  withCommonFlags(
    group
      .command('create')
      .description('create a secured parking with fresh keys: an issuer key pair (signed) or a parking key (sealed)'),
  )
    .requiredOption('--name <name>', 'shown to drivers')
    .requiredOption('--currency <code>', 'ISO 4217, e.g. EUR')
    .requiredOption('--price-per-hour <decimal>', 'e.g. 2.50 (at most 2 decimals)')
    .requiredOption('--max-duration-minutes <minutes>', 'length of a session window')
    .option('--tries <n>', 'tries per direction with a session key, 1..255', '10')
    .option('--online', 'the parking opens only through the server')
    .option('--description <text>', 'free text')
    .option(
      '--access <mode>',
      `${ACCESS_MODES.join(' or ')}: smart keys signed by the parking's issuer key (protocol version 2) or sealed under its parking key (version 1 firmware)`,
      DEFAULT_ACCESS_MODE,
    )
    .action(async (flags: CreateFlags) => {
      const accessMode = parseAccessMode(flags.access);
      const input: NewParkingInput = {
        name: parseName('--name', flags.name),
        description: flags.description === undefined ? null : flags.description.trim().slice(0, 1000),
        currency: parseCurrency(flags.currency),
        pricePerHourMinor: parsePrice(flags.pricePerHour),
        maxDurationMinutes: parseMaxDuration(flags.maxDurationMinutes),
        tries: parseTries(flags.tries),
        isOnline: flags.online === true,
      };
      await withDatabase(flags, async (ctx) =>
        printResult(flags, await createParkingRow(ctx, input, accessMode), CREATED_NOTE[accessMode]),
      );
    });

  withCommonFlags(
    group
      .command('show')
      .description("a parking's settings, access mode, issuer public keys and boxes (no secret key)"),
  )
    .requiredOption('--id <id>', 'the secured parking id')
    .action(async (flags: ShowFlags) => {
      const id = parseId('--id', flags.id);
      const { parkingView } = await import('../../api/operators/parking-view.js');
      await withReadOnlyDatabase(flags, async (ctx) => printResult(flags, await parkingView(ctx.store, id)));
    });

  withCommonFlags(
    group
      .command('forwarding')
      .description("set where a parking's box logs are forwarded (spec section 6), or rotate its signing secret"),
  )
    .requiredOption('--parking <id>', 'the secured parking id')
    .option('--url <url>', 'the third party POST URL (http or https); with --expose')
    .option('--expose <bool>', 'true to forward box logs, false to stop; with --url')
    .option(
      '--forward-unverified <bool>',
      'true to forward box logs whose response was not verified too (default false; kept when not given)',
    )
    .option(
      '--rotate-secret',
      'issue a new signing secret (shown once); the current one keeps signing during the overlap',
    )
    .option(
      '--overlap-hours <hours>',
      `with --rotate-secret: hours both secrets sign every delivery, 0 to ${MAX_OVERLAP_HOURS}`,
      String(DEFAULT_OVERLAP_HOURS),
    )
    .action(async (flags: ForwardingFlags) => {
      const parkingId = parseId('--parking', flags.parking);
      if ((flags.url === undefined) !== (flags.expose === undefined))
        throw new UsageError('--url and --expose go together');
      if (flags.url === undefined && flags.rotateSecret !== true)
        throw new UsageError('give --url and --expose, or --rotate-secret, or both');
      if (flags.forwardUnverified !== undefined && flags.url === undefined)
        throw new UsageError('--forward-unverified goes with --url and --expose');
      const change =
        flags.url === undefined || flags.expose === undefined
          ? undefined
          : {
              url: parseHttpUrl('--url', flags.url),
              expose: parseBoolean('--expose', flags.expose),
              ...(flags.forwardUnverified === undefined
                ? {}
                : { forwardUnverified: parseBoolean('--forward-unverified', flags.forwardUnverified) }),
            };
      const overlapHours =
        flags.overlapHours === undefined || flags.rotateSecret !== true
          ? DEFAULT_OVERLAP_HOURS
          : parseOverlapHours(flags.overlapHours);
      const { rotateForwardingSecret, setForwarding } = await import('../../api/forwarding/parking-settings.js');
      await withDatabase(flags, async (ctx) => {
        if (change !== undefined && !ctx.config.forwardingAllowPrivate) await warnIfPrivate(change.url);
        const store = ctx.store;
        let setting = change === undefined ? undefined : await setForwarding(store, parkingId, change, ctx.now);
        if (flags.rotateSecret === true) {
          // A first setting that made a secret has nothing to overlap with.
          setting =
            setting !== undefined && setting.forwarding_secret !== null
              ? setting
              : await rotateForwardingSecret(store, parkingId, overlapHours, ctx.now);
        }
        if (setting) printResult(flags, setting, forwardingNote(setting));
      });
    });
}

/** Set anyway (the API that forwards may allow it), but said: delivery refuses it unless FORWARDING_ALLOW_PRIVATE. */
async function warnIfPrivate(url: string): Promise<void> {
  const { nonPublicAddressOf } = await import('../../api/forwarding/address-guard.js');
  const found = await nonPublicAddressOf(url);
  if (found === undefined) return;
  const where = found.host === found.address ? found.address : `${found.host} resolves to ${found.address}`;
  process.stderr.write(
    `note: ${where} (${found.kind}): an API with FORWARDING_ALLOW_PRIVATE=false (parkbench api's default) refuses to deliver there; parkbench start allows it\n`,
  );
}

function parseOverlapHours(raw: string): number {
  const hours = Number(raw);
  if (!/^\d+$/.test(raw) || hours > MAX_OVERLAP_HOURS)
    throw new UsageError(`--overlap-hours must be an integer from 0 to ${MAX_OVERLAP_HOURS}, got "${raw}"`);
  return hours;
}
