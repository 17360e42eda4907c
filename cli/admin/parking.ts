// `parkbench admin parking create|show|forwarding`.
import type { Command } from 'commander';
import { ACCESS_MODES, createParking, DEFAULT_ACCESS_MODE, type ParkingInput } from '../../api/parkings/create.js';
import { setForwarding } from '../../api/parkings/forwarding.js';
import { parkingView } from '../../api/parkings/view.js';
import { formatMinorUnits, type AccessMode } from '../../api/repositories/parkings.js';
import { printResult, withCommonFlags, withDatabase, withReadOnlyDatabase, type AdminContext, type CommonFlags } from './context.js';
import { parseAccessMode, parseBoolean, parseCurrency, parseHttpUrl, parseId, parseMaxDuration, parseName, parsePrice, parseTries } from './validate.js';

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
function createParkingRow(ctx: AdminContext, input: NewParkingInput, accessMode: AccessMode = DEFAULT_ACCESS_MODE): CreatedParking {
  const created = createParking(ctx.db, input, accessMode, ctx.now);
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
  url: string;
  expose: string;
  forwardUnverified?: string;
}

export function registerParkingCommands(admin: Command): void {
  const group = admin.command('parking').description('secured parkings');
  withCommonFlags(group.command('create').description('create a secured parking with fresh keys: an issuer key pair (signed) or a parking key (sealed)'))
    .requiredOption('--name <name>', 'shown to drivers')
    .requiredOption('--currency <code>', 'ISO 4217, e.g. EUR')
    .requiredOption('--price-per-hour <decimal>', 'e.g. 2.50 (at most 2 decimals)')
    .requiredOption('--max-duration-minutes <minutes>', 'length of a session window')
    .option('--tries <n>', 'tries per direction with a session key, 1..255', '10')
    .option('--online', 'the parking opens only through the server')
    .option('--description <text>', 'free text')
    .option('--access <mode>', `${ACCESS_MODES.join(' or ')}: smart keys signed by the parking's issuer key (protocol version 2) or sealed under its parking key (version 1 firmware)`, DEFAULT_ACCESS_MODE)
    .action((flags: CreateFlags) => {
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
      return withDatabase(flags, (ctx) => printResult(flags, createParkingRow(ctx, input, accessMode), CREATED_NOTE[accessMode]));
    });

  withCommonFlags(group.command('show').description("a parking's settings, access mode, issuer public keys and boxes (no secret key)"))
    .requiredOption('--id <id>', 'the secured parking id')
    .action((flags: ShowFlags) => {
      const id = parseId('--id', flags.id);
      return withReadOnlyDatabase(flags, (ctx) => printResult(flags, parkingView(ctx.db, id)));
    });

  withCommonFlags(group.command('forwarding').description("set where a parking's box logs are forwarded (spec section 6)"))
    .requiredOption('--parking <id>', 'the secured parking id')
    .requiredOption('--url <url>', 'the third party POST URL (http or https)')
    .requiredOption('--expose <bool>', 'true to forward box logs, false to stop')
    .option('--forward-unverified <bool>', 'true to forward box logs whose response was not verified too (default false; kept when not given)')
    .action((flags: ForwardingFlags) => {
      const parkingId = parseId('--parking', flags.parking);
      const url = parseHttpUrl('--url', flags.url);
      const expose = parseBoolean('--expose', flags.expose);
      const forwardUnverifiedFlag = flags.forwardUnverified === undefined ? undefined : parseBoolean('--forward-unverified', flags.forwardUnverified);
      return withDatabase(flags, (ctx) => {
        const setting = setForwarding(ctx.db, parkingId, { url, expose, ...(forwardUnverifiedFlag === undefined ? {} : { forwardUnverified: forwardUnverifiedFlag }) });
        printResult(flags, setting, 'Deliveries are signed with the forwarding secret (HMAC-SHA256).');
      });
    });
}
