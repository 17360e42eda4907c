// `parkbench admin user create`: flags checked with the registration's rules,
// and output; the driver is made by api/users/create-driver.ts.
import type { Command } from 'commander';
import {
  EMAIL_MAX_LENGTH,
  EMAIL_PATTERN,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  PHONE_MAX_LENGTH,
} from '../../api/http/schemas.js';
import { UsageError } from '../errors.js';
import { printResult, withCommonFlags, withDatabase, type CommonFlags } from './context.js';
import { parseName } from './validate.js';

export interface NewDriverFlags {
  email: string;
  password: string;
  firstName: string;
  lastName: string;
  phone: string;
}

export function checkDriver(flags: NewDriverFlags): NewDriverFlags {
  const email = flags.email.trim();
  if (email.length > EMAIL_MAX_LENGTH || !new RegExp(EMAIL_PATTERN).test(email))
    throw new UsageError(`--email must be an email address, got "${flags.email}"`);
  if (flags.password.length < PASSWORD_MIN_LENGTH || flags.password.length > PASSWORD_MAX_LENGTH) {
    throw new UsageError(`--password must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters`);
  }
  return {
    email,
    password: flags.password,
    firstName: parseName('--first-name', flags.firstName),
    lastName: parseName('--last-name', flags.lastName),
    phone: parseName('--phone', flags.phone, PHONE_MAX_LENGTH),
  };
}

export function registerUserCommands(admin: Command): void {
  const group = admin.command('user').description('car drivers');
  withCommonFlags(group.command('create').description('create a car driver'))
    .requiredOption('--email <email>', 'unique, case-insensitive')
    .requiredOption('--password <password>', `${PASSWORD_MIN_LENGTH} characters or more`)
    .requiredOption('--first-name <name>', 'first name')
    .requiredOption('--last-name <name>', 'last name')
    .requiredOption('--phone <phone>', 'phone number')
    .action(async (flags: CommonFlags & NewDriverFlags) => {
      const driver = checkDriver(flags);
      const { createDriver } = await import('../../api/auth/create-driver.js');
      const created = await withDatabase(flags, (ctx) =>
        createDriver(ctx.store, driver, ctx.config.scryptLog2N, ctx.now),
      );
      printResult(flags, created);
    });
}
