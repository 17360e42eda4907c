// `parkbench admin mqtt-client add` and `parkbench admin mqtt-acl`: flags,
// files and output; the accounts and the export are api/mqtt/clients.ts.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { checkReplaceable, UnsafeTargetError, writeFileAtomic } from '../../lib/atomic-file.js';
import { Topics } from '../../lib/mqtt-topics.js';
import { CliError, UsageError } from '../errors.js';
import { printResult, withCommonFlags, withDatabase, withReadOnlyDatabase, type CommonFlags } from './context.js';
import { parseName } from './validate.js';
import { messageOf } from '../../lib/message-of.js';

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
    .action(async (flags: AddFlags) => {
      const name = parseName('--name', flags.name, 60);
      if (flags.role !== 'gateway' && flags.role !== 'operator')
        throw new UsageError(`--role must be gateway or operator, got "${flags.role}"`);
      const role = flags.role;
      const { addMqttClient } = await import('../../api/mqtt/clients.js');
      await withDatabase(flags, async (ctx) => {
        printResult(
          flags,
          await addMqttClient(ctx.store, name, role, ctx.now),
          'The MQTT password is shown only now (it is stored hashed).',
        );
      });
    });

  withCommonFlags(admin.command('mqtt-acl').description('export MQTT accounts and access rules for an external broker'))
    .requiredOption('--format <format>', 'mosquitto (a password_file and an acl_file)')
    .requiredOption('--out <dir>', 'folder to write into (created)')
    .option('--topic-prefix <prefix>', 'first topic level', process.env.MQTT_TOPIC_PREFIX ?? 'parkbench')
    .action(async (flags: AclFlags) => {
      if (flags.format !== 'mosquitto') throw new UsageError(`--format must be mosquitto, got "${flags.format}"`);
      let topics: Topics;
      try {
        topics = new Topics(flags.topicPrefix);
      } catch (error) {
        throw new UsageError(`--topic-prefix: ${messageOf(error)}`);
      }
      const username = process.env.MQTT_USERNAME;
      const password = process.env.MQTT_PASSWORD;
      if ((username === undefined) !== (password === undefined))
        throw new UsageError('set both MQTT_USERNAME and MQTT_PASSWORD (the API account) or neither');
      const { mosquittoExport } = await import('../../api/mqtt/clients.js');
      await withReadOnlyDatabase(flags, async (ctx) => {
        const exported = await mosquittoExport(
          ctx.store,
          topics,
          username === undefined || password === undefined ? undefined : { username, password },
        );
        const passwordFile = join(flags.out, 'passwords');
        const aclFile = join(flags.out, 'acl');
        // Both refused before either is written when one is no regular file (exit 2).
        checkReplaceable(passwordFile);
        checkReplaceable(aclFile);
        try {
          mkdirSync(flags.out, { recursive: true });
          await writeFileAtomic(passwordFile, exported.passwords, { mode: 0o600 });
          await writeFileAtomic(aclFile, exported.acl, { mode: 0o644 });
        } catch (error) {
          if (error instanceof UnsafeTargetError) throw error;
          throw new CliError(`cannot write into ${flags.out}: ${messageOf(error)}`);
        }
        printResult(
          flags,
          { format: 'mosquitto', password_file: passwordFile, acl_file: aclFile, accounts: exported.accounts },
          // max_queued_messages: mosquitto's default (1000) drops the rest of a burst of responses (docs/beyond-one-machine.md).
          `In mosquitto.conf:\n  allow_anonymous false\n  password_file ${passwordFile}\n  acl_file ${aclFile}\n  max_queued_messages 100000`,
        );
      });
    });
}
