// The `parkbench` command line: one program, one subcommand per part of the
// bench. Each subcommand lives in its own file under cli/commands/ and is
// registered here.
import { Command, CommanderError } from 'commander';
import { DomainError } from '../api/http/domain-error.js';
import { UnsafeTargetError } from '../lib/atomic-file.js';
import { packageVersionNear } from '../lib/package-version.js';
import { CliError, ExitCode } from './errors.js';
import { registerProtocolCommands } from './commands/protocol.js';
import { registerApiCommand } from './commands/api.js';
import { registerAdminCommands } from './commands/admin.js';
import { registerSimCommand } from './commands/sim.js';
import { registerGatewayCommand } from './commands/gateway.js';
import { registerStartCommand } from './commands/start.js';
import { registerAppCommand } from './commands/app.js';
import { registerConformanceCommand } from './commands/conformance.js';
import { registerPowerCommand } from './commands/power.js';
import { registerSoakCommand } from './commands/soak.js';
import { registerReserveCommand } from './commands/reserve.js';
import { registerReleaseCommand } from './commands/release.js';

function buildProgram(): Command {
  const program = new Command('parkbench')
    .description('Hardware-in-the-loop bench for parking access boxes')
    .version(packageVersionNear(import.meta.url), '-V, --version')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  registerProtocolCommands(program);
  registerApiCommand(program);
  registerAdminCommands(program);
  registerSimCommand(program);
  registerGatewayCommand(program);
  registerStartCommand(program);
  registerAppCommand(program);
  registerConformanceCommand(program);
  registerPowerCommand(program);
  registerSoakCommand(program);
  registerReserveCommand(program);
  registerReleaseCommand(program);
  return program;
}

async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (error) {
    process.exitCode = exitCodeFor(error);
  }
}

/** Maps what a command threw to an exit code, printing one line for errors
 * that commander has not printed already. Usage errors exit 2. */
function exitCodeFor(error: unknown): number {
  if (error instanceof CommanderError) {
    // commander printed the message (or the help/version) itself.
    return error.exitCode === 0 ? 0 : 2;
  }
  if (error instanceof CliError) {
    process.stderr.write(`parkbench: ${error.message}\n`);
    return error.exitCode;
  }
  if (error instanceof UnsafeTargetError) {
    // A path that names a link, a folder or a device: the user must name another.
    process.stderr.write(`parkbench: ${error.message}\n`);
    return ExitCode.usage;
  }
  if (error instanceof DomainError) {
    // The operator's domain (api/) refused: its message is the one line, every kind a failure.
    process.stderr.write(`parkbench: ${error.message}\n`);
    return ExitCode.failure;
  }
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`parkbench: unexpected error: ${message}\n`);
  return 1;
}

await main(process.argv);
// A command is over when its action is: handles a library keeps open (noble's
// WebSocket to a virtual radio, a broker socket being torn down) must not
// hold the process. Output is flushed first so nothing printed is lost.
await flushStandardStreams();
process.exit(process.exitCode ?? 0);

function flushStandardStreams(): Promise<void> {
  const flush = (stream: NodeJS.WriteStream): Promise<void> =>
    new Promise((resolve) => (stream.writableLength === 0 ? resolve() : stream.write('', () => resolve())));
  return Promise.all([flush(process.stdout), flush(process.stderr)]).then(() => undefined);
}
