// `parkbench admin mqtt-client add` and `parkbench admin mqtt-acl`: MQTT
// accounts of gateways and operators, and the access rules exported for an
// external mosquitto (issue 7).
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { randomSecret } from '../../api/auth/secrets.js';
import { MqttAcl, type MqttAccount } from '../../api/mqtt/acl.js';
import { MqttAccountRepository, type ClientRole } from '../../api/mqtt/accounts.js';
import { hashMqttPassword, isMosquittoHash } from '../../api/mqtt/password-hash.js';
import { Topics } from '../../lib/mqtt-topics.js';
import { CliError, UsageError } from '../errors.js';
import { printResult, withCommonFlags, withDatabase, withReadOnlyDatabase, type AdminContext, type CommonFlags } from './context.js';
import { parseName } from './validate.js';

export interface AddedMqttClient {
  name: string;
  role: ClientRole;
  mqtt_username: string;
  mqtt_password: string;
}

const ROLE_PREFIX: Record<ClientRole, string> = { gateway: 'gw', operator: 'op' };

/** A username from the name: `gw-bench-1` for a gateway named "Bench 1". It
 * is also the gateway's id in its topics, so only [a-z0-9-]. */
export function mqttUsernameOf(role: ClientRole, name: string): string {
  const slug = name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48);
  return `${ROLE_PREFIX[role]}-${slug === '' ? 'client' : slug}`;
}

export function addMqttClient(ctx: AdminContext, name: string, role: ClientRole): AddedMqttClient {
  const accounts = new MqttAccountRepository(ctx.db);
  const username = mqttUsernameOf(role, name);
  if (accounts.findClient(username) !== undefined) throw new CliError(`an MQTT client ${username} already exists: choose another --name`);
  const password = randomSecret(24);
  accounts.addClient({ name, role, username, password_hash: hashMqttPassword(password) }, ctx.now);
  return { name, role, mqtt_username: username, mqtt_password: password };
}

export interface MosquittoExport {
  passwords: string;
  acl: string;
  accounts: number;
}

/** The mosquitto password file (the stored $7$ hashes, as they are) and ACL
 * file of every account, plus the API's own from MQTT_USERNAME/MQTT_PASSWORD. */
export function mosquittoExport(ctx: AdminContext, topics: Topics, api: { username: string; password: string } | undefined): MosquittoExport {
  const entries = new MqttAccountRepository(ctx.db).listWithHashes();
  const accounts: MqttAccount[] = entries.map((entry) => entry.account);
  const passwordLines: string[] = [];
  for (const entry of entries) {
    if (!isMosquittoHash(entry.passwordHash)) {
      throw new CliError(`${entry.account.username} has a password hash mosquitto cannot read (made before MQTT passwords were stored for mosquitto): run \`parkbench admin box provision\` for that box`);
    }
    passwordLines.push(`${entry.account.username}:${entry.passwordHash}`);
  }
  if (api !== undefined) {
    accounts.push({ role: 'api', username: api.username });
    passwordLines.push(`${api.username}:${hashMqttPassword(api.password)}`);
  }
  return { passwords: `${passwordLines.join('\n')}\n`, acl: new MqttAcl(topics).mosquittoAcl(accounts), accounts: accounts.length };
}

interface AddFlags extends CommonFlags {
  name: string;
  role: string;
}

interface AclFlags extends CommonFlags {
  format: string;
  out: string;
  topicPrefix: string;
}

export function registerMqttCommands(admin: Command): void {
  const clients = admin.command('mqtt-client').description('MQTT accounts of gateways and operators');
  withCommonFlags(clients.command('add').description('create an MQTT account; the password is shown only now'))
    .requiredOption('--name <name>', 'a name for the account (its username is derived from it)')
    .requiredOption('--role <role>', 'gateway (bridges boxes) or operator (test tools, the app stand-in, a person)')
    .action((flags: AddFlags) => {
      const name = parseName('--name', flags.name, 60);
      if (flags.role !== 'gateway' && flags.role !== 'operator') throw new UsageError(`--role must be gateway or operator, got "${flags.role}"`);
      const role = flags.role;
      return withDatabase(flags, (ctx) => {
        printResult(flags, addMqttClient(ctx, name, role), 'The MQTT password is shown only now (it is stored hashed).');
      });
    });

  withCommonFlags(admin.command('mqtt-acl').description('export MQTT accounts and access rules for an external broker'))
    .requiredOption('--format <format>', 'mosquitto (a password_file and an acl_file)')
    .requiredOption('--out <dir>', 'folder to write into (created)')
    .option('--topic-prefix <prefix>', 'first topic level', process.env.MQTT_TOPIC_PREFIX ?? 'parkbench')
    .action((flags: AclFlags) => {
      if (flags.format !== 'mosquitto') throw new UsageError(`--format must be mosquitto, got "${flags.format}"`);
      let topics: Topics;
      try {
        topics = new Topics(flags.topicPrefix);
      } catch (error) {
        throw new UsageError(`--topic-prefix: ${(error as Error).message}`);
      }
      const username = process.env.MQTT_USERNAME;
      const password = process.env.MQTT_PASSWORD;
      if ((username === undefined) !== (password === undefined)) throw new UsageError('set both MQTT_USERNAME and MQTT_PASSWORD (the API account) or neither');
      return withReadOnlyDatabase(flags, (ctx) => {
        const exported = mosquittoExport(ctx, topics, username === undefined || password === undefined ? undefined : { username, password });
        const passwordFile = join(flags.out, 'passwords');
        const aclFile = join(flags.out, 'acl');
        try {
          mkdirSync(flags.out, { recursive: true });
          writeFileSync(passwordFile, exported.passwords, { mode: 0o600 });
          chmodSync(passwordFile, 0o600);
          writeFileSync(aclFile, exported.acl, { mode: 0o644 });
        } catch (error) {
          throw new CliError(`cannot write into ${flags.out}: ${(error as Error).message}`);
        }
        printResult(flags, { format: 'mosquitto', password_file: passwordFile, acl_file: aclFile, accounts: exported.accounts }, `In mosquitto.conf:\n  allow_anonymous false\n  password_file ${passwordFile}\n  acl_file ${aclFile}`);
      });
    });
}
