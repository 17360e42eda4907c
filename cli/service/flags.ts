// The flags every command that talks to a running service shares
// (`reserve`, `release`, and `conformance`/`soak` with `--record`): where
// the service is, the operator's token and a reservation's token, each
// also from the environment. Declared and checked here, before anything is
// opened; light (commander's types and the errors only), as the commands'
// files that declare them must be.
import type { Command } from 'commander';
import { UsageError } from '../errors.js';

export interface ServiceFlags {
  serviceUrl?: string;
  operatorToken?: string;
  reservation?: string;
}

/** Where the service is and who the caller is, checked. */
export interface ServiceSettings {
  /** The service's base URL, without a trailing slash (`http://bench:8080`). */
  readonly url: string;
  readonly operatorToken: string;
  /** A reservation's token, sent as `Parkbench-Reservation`. */
  readonly reservation: string | undefined;
}

const SERVICE_URL_VARIABLE = 'PARKBENCH_URL';
const OPERATOR_TOKEN_VARIABLE = 'PARKBENCH_OPERATOR_TOKEN';
const RESERVATION_VARIABLE = 'PARKBENCH_RESERVATION';

/** Adds --service-url, --operator-token and (unless `reservation` is false) --reservation. */
export function addServiceOptions(command: Command, options: { reservation?: boolean } = {}): Command {
  command
    .option('--service-url <url>', `the running service, e.g. http://bench:8080 (default: $${SERVICE_URL_VARIABLE})`)
    .option(
      '--operator-token <token>',
      `an operator's token (\`parkbench admin operator add\`; default: $${OPERATOR_TOKEN_VARIABLE}, which keeps it out of the process list)`,
    );
  if (options.reservation !== false)
    command.option(
      '--reservation <token>',
      `the token of your reservation of the box (\`parkbench reserve\`; default: $${RESERVATION_VARIABLE})`,
    );
  return command;
}

/** The service's settings from the flags, else the environment; `why` says
 * what needs them in the one line a missing one gives (exit 2). */
export function serviceSettings(flags: ServiceFlags, env: NodeJS.ProcessEnv, why: string): ServiceSettings {
  const rawUrl = nonEmpty(flags.serviceUrl) ?? nonEmpty(env[SERVICE_URL_VARIABLE]);
  if (rawUrl === undefined)
    throw new UsageError(`${why} needs the service: --service-url URL or $${SERVICE_URL_VARIABLE}`);
  const operatorToken = nonEmpty(flags.operatorToken) ?? nonEmpty(env[OPERATOR_TOKEN_VARIABLE]);
  if (operatorToken === undefined)
    throw new UsageError(`${why} needs an operator's token: --operator-token T or $${OPERATOR_TOKEN_VARIABLE}`);
  return {
    url: baseUrl(rawUrl),
    operatorToken,
    reservation: nonEmpty(flags.reservation) ?? nonEmpty(env[RESERVATION_VARIABLE]),
  };
}

function baseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--service-url must be an http:// or https:// URL, got "${raw}"`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '')
    throw new UsageError(`--service-url must be an http:// or https:// URL without a query, got "${raw}"`);
  if (url.username !== '' || url.password !== '')
    throw new UsageError('--service-url must not hold a user or password: give the token with --operator-token');
  return url.href.replace(/\/+$/, '');
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}
