// `parkbench admin`: the operator's tools on the API's database (the spec
// leaves them out). Each subcommand lives in cli/admin/.
import type { Command } from 'commander';
import { registerBoxCommands } from '../admin/box.js';
import { registerClientAppCommands } from '../admin/client-app.js';
import { registerControlCommands } from '../admin/control.js';
import { registerDemoCommand } from '../admin/demo.js';
import { registerFleetCommands } from '../admin/fleet.js';
import { registerForwardingCommands } from '../admin/forwarding.js';
import { registerMqttCommands } from '../admin/mqtt.js';
import { registerOperatorCommands } from '../admin/operator.js';
import { registerParkingCommands } from '../admin/parking.js';
import { registerParkingAccessCommands } from '../admin/parking-access.js';
import { registerSmartKeyCommands } from '../admin/smart-key.js';
import { registerUserCommands } from '../admin/user.js';

export function registerAdminCommands(program: Command): void {
  const admin = program
    .command('admin')
    .description("operator tools on the API's database (--database, else DATABASE_URL, else DATABASE_PATH)");
  registerClientAppCommands(admin);
  registerParkingCommands(admin);
  registerParkingAccessCommands(admin);
  registerSmartKeyCommands(admin);
  registerControlCommands(admin);
  registerBoxCommands(admin);
  registerUserCommands(admin);
  registerDemoCommand(admin);
  registerFleetCommands(admin);
  registerMqttCommands(admin);
  registerForwardingCommands(admin);
  registerOperatorCommands(admin);
}
