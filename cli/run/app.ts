// `parkbench app`, its flags read (commands/app.ts): the phone's steps
// against the API and the boxes, or the upload of box logs kept offline.
import { readFile } from 'node:fs/promises';
import type { BoxLogInput } from '../../api/box-logs/types.js';
import { Topics } from '../../lib/mqtt-topics.js';
import { BoxChannel } from '../app/box-channel.js';
import { runApp, type AppOptions } from '../app/flow.js';
import { ApiClient, StepFailure } from '../app/http.js';
import { CliError, UsageError } from '../errors.js';
import { checkReplaceable, writeFileAtomic } from '../../lib/atomic-file.js';
import { messageOf } from '../../lib/message-of.js';

export interface AppFlags {
  server: string;
  clientAppId?: string;
  clientSecret?: string;
  email?: string;
  password?: string;
  register?: boolean;
  firstName: string;
  lastName: string;
  phone: string;
  parking?: string;
  mqtt: string;
  mqttUsername?: string;
  mqttPassword?: string;
  topicPrefix: string;
  entranceBox?: string;
  exitBox?: string;
  pay: boolean;
  offline?: boolean;
  offlineFile: string;
  upload?: string;
  answerMs: string;
}

export async function runAppCommand(flags: AppFlags): Promise<void> {
  const api = new ApiClient(serverUrl(flags.server));
  const client = {
    client_app_id: required(flags.clientAppId, '--client-app-id'),
    client_secret: required(flags.clientSecret, '--client-secret'),
  };
  const driver = { email: required(flags.email, '--email'), password: required(flags.password, '--password') };
  const say = (line: string): void => void process.stdout.write(`${line}\n`);
  if (flags.upload !== undefined) {
    await uploadKept(api, client, driver, flags.upload, say);
    return;
  }
  // A --offline-file that is no regular file is refused (exit 2) before the session starts.
  if (flags.offline === true) checkReplaceable(flags.offlineFile);
  const options: AppOptions = {
    client,
    driver,
    parkingId: integer('--parking', required(flags.parking, '--parking')),
    pay: flags.pay,
    offline: flags.offline === true,
    answerMs: integer('--answer-ms', flags.answerMs),
    ...(flags.register === true
      ? { register: { first_name: flags.firstName, last_name: flags.lastName, phone: flags.phone } }
      : {}),
    ...(flags.entranceBox === undefined ? {} : { entranceBox: integer('--entrance-box', flags.entranceBox) }),
    ...(flags.exitBox === undefined ? {} : { exitBox: integer('--exit-box', flags.exitBox) }),
  };
  let topics: Topics;
  try {
    topics = new Topics(flags.topicPrefix);
  } catch (error) {
    throw new UsageError(`--topic-prefix: ${messageOf(error)}`);
  }
  if (!/^(mqtts?|wss?|tcp):\/\/\S+$/.test(flags.mqtt))
    throw new UsageError(`--mqtt must be an mqtt:// URL, got "${flags.mqtt}"`);
  const boxes = await BoxChannel.connect(flags.mqtt, flags.mqttUsername, flags.mqttPassword, topics).catch(
    (error: unknown) => {
      throw new CliError(`connect to the boxes: ${messageOf(error)}`);
    },
  );
  try {
    const result = await runApp(api, boxes, options, say);
    if (result.kept.length > 0) {
      await writeFileAtomic(flags.offlineFile, `${JSON.stringify(result.kept, null, 2)}\n`);
      say(
        `✔ offline: ${result.kept.length} box logs kept in ${flags.offlineFile}; upload them with: parkbench app --upload ${flags.offlineFile} (plus the same --server, client and driver flags)`,
      );
    }
    say(`all ${result.steps} steps did what they should`);
  } catch (error) {
    if (error instanceof StepFailure) throw new CliError(`step failed: ${error.message}`);
    throw error;
  } finally {
    await boxes.close();
  }
}

/** `--upload FILE`: the box logs a phone kept while offline, sent now with offline: true. */
async function uploadKept(
  api: ApiClient,
  client: { client_app_id: string; client_secret: string },
  driver: { email: string; password: string },
  file: string,
  say: (line: string) => void,
): Promise<void> {
  let logs: BoxLogInput[];
  try {
    logs = JSON.parse(await readFile(file, 'utf8')) as BoxLogInput[];
  } catch (error) {
    throw new UsageError(`--upload ${file}: ${messageOf(error)}`);
  }
  if (!Array.isArray(logs) || logs.length === 0) throw new UsageError(`--upload ${file}: no box logs in it`);
  try {
    const token = (
      await api.expect<{ access_token: string }>(200, 'POST', '/api/oauth/token', {
        json: { grant_type: 'password', username: driver.email, password: driver.password, ...client },
      })
    ).access_token;
    say('✔ log in');
    const body = await api.expect<{ box_logs: { id: number; verified: boolean; duplicate: boolean }[] }>(
      201,
      'POST',
      '/api/box_logs',
      { token, json: { box_logs: logs.map((log) => ({ box_log: { ...log, offline: true } })) } },
    );
    const verified = body.box_logs.filter((log) => log.verified).length;
    say(
      `✔ upload ${logs.length} box logs kept offline: ${verified} verified, ${body.box_logs.filter((log) => log.duplicate).length} already delivered by the boxes (stored once)`,
    );
    if (verified !== logs.length) throw new StepFailure(`${logs.length - verified} box logs did not verify`);
  } catch (error) {
    if (error instanceof StepFailure) throw new CliError(`step failed: ${error.message}`);
    throw error;
  }
}

function serverUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
    return raw.replace(/\/+$/, '');
  } catch {
    throw new UsageError(`--server must be an http(s) URL, got "${raw}"`);
  }
}

function required(value: string | undefined, flag: string): string {
  if (value === undefined || value === '') throw new UsageError(`${flag} is required`);
  return value;
}

function integer(flag: string, raw: string): number {
  if (!/^\d{1,10}$/.test(raw)) throw new UsageError(`${flag} must be a whole number, got "${raw}"`);
  return Number(raw);
}
