// `--record` and `--label NAME=VALUE` of `parkbench conformance` and
// `soak`: the run kept by a running service (docs/bench.md, Sharing a
// bench). Declared here (light: commander's types, for the commands'
// files) and checked before anything is opened: a label without `=`, a bad
// name, or --record without the service's URL or an operator's token is
// one line and exit 2. The labels a run gets are the bench file's, the CI
// job's URL, then --label's (the flags win); its source is `ci` under a CI
// runner (CI set and not "false"), else `cli`.
import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { addServiceOptions, serviceSettings, type ServiceFlags, type ServiceSettings } from './flags.js';

export interface RecordFlags extends ServiceFlags {
  record?: boolean;
  label?: string[];
}

export interface RecordSettings {
  readonly service: ServiceSettings;
  readonly source: 'cli' | 'ci';
  /** The CI job's labels and --label's, the flags' last (they win over the bench file's too). */
  readonly labels: Readonly<Record<string, string>>;
}

/** A label's name: 1 to 64 letters, digits, `_`, `.` and `-`; a value of up to
 * 512 characters; 32 labels a run at most (the service's bounds). */
const LABEL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const MAX_LABEL_VALUE_LENGTH = 512;
const MAX_LABELS = 32;

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** Adds --record, --label and the service's flags to `command`; `what` names the run. */
export function addRecordOptions(command: Command, what: string): Command {
  command
    .option(
      '--record',
      `keep the ${what} in a running service (its runs, compared on the bench page): posted as it goes; a service that cannot be reached does not fail the run`,
    )
    .option(
      '--label <name=value>',
      "with --record: a label of the run (firmware=1.4.2); repeatable; over the bench file's labels",
      collect,
    );
  return addServiceOptions(command);
}

/** The recording's settings, or undefined without --record. */
export function recordSettings(
  flags: RecordFlags,
  env: NodeJS.ProcessEnv,
  command: string,
): RecordSettings | undefined {
  const given = (flags.label ?? []).map(parseLabel);
  if (flags.record !== true) {
    if (given.length > 0) throw new UsageError('--label goes with --record');
    return undefined;
  }
  const service = serviceSettings(flags, env, `${command} --record`);
  return {
    service,
    source: isCi(env) ? 'ci' : 'cli',
    labels: { ...ciLabels(env), ...Object.fromEntries(given) },
  };
}

/** The labels of a run: the bench file's, under the recording's (CI's and
 * the flags'); a UsageError when a bench file's name is one the service
 * refuses, or when they are too many. */
export function runLabels(
  bench: Readonly<Record<string, string>> | undefined,
  settings: RecordSettings,
): Record<string, string> {
  for (const [name, value] of Object.entries(bench ?? {})) checkLabel(`the bench file's label ${name}`, name, value);
  const labels = { ...bench, ...settings.labels };
  const count = Object.keys(labels).length;
  if (count > MAX_LABELS)
    throw new UsageError(
      `a run has at most ${MAX_LABELS} labels: the bench file's, the CI job's and --label's make ${count}`,
    );
  return labels;
}

function parseLabel(raw: string): [string, string] {
  const equals = raw.indexOf('=');
  if (equals < 0) throw new UsageError(`--label must be NAME=VALUE, got "${raw}"`);
  const name = raw.slice(0, equals).trim();
  const value = raw.slice(equals + 1);
  checkLabel(`--label ${raw}`, name, value);
  return [name, value];
}

function checkLabel(what: string, name: string, value: string): void {
  if (!LABEL_NAME.test(name)) throw new UsageError(`${what}: a label's name is 1 to 64 letters, digits, _ . or -`);
  if (value.length > MAX_LABEL_VALUE_LENGTH)
    throw new UsageError(`${what}: a label's value is at most ${MAX_LABEL_VALUE_LENGTH} characters`);
}

function isCi(env: NodeJS.ProcessEnv): boolean {
  const ci = env.CI?.trim();
  return ci !== undefined && ci !== '' && ci.toLowerCase() !== 'false';
}

/** `ci_job_url`: GitLab's CI_JOB_URL, GitHub Actions' run, or Jenkins' BUILD_URL. */
function ciLabels(env: NodeJS.ProcessEnv): Record<string, string> {
  const set = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const [server, repository, runId] = [set('GITHUB_SERVER_URL'), set('GITHUB_REPOSITORY'), set('GITHUB_RUN_ID')];
  const github =
    server === undefined || repository === undefined || runId === undefined
      ? undefined
      : `${server}/${repository}/actions/runs/${runId}`;
  const url = set('CI_JOB_URL') ?? github ?? set('BUILD_URL');
  return url === undefined ? {} : { ci_job_url: url };
}
