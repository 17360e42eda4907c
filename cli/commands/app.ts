// `parkbench app`: the mobile app's stand-in. Does what the phone does, step
// by step, printing each step; exit code 0 only when every step did what it
// should, else the failing step and why (exit 1).
import type { Command } from 'commander';
import type { AppFlags } from '../run/app.js';

export function registerAppCommand(program: Command): void {
  program
    .command('app')
    .description(
      "The mobile app's stand-in: log in, start a session, open the entrance box, pay, open the exit box, upload the box logs",
    )
    .option('--server <url>', 'the API', 'http://127.0.0.1:3000')
    .option('--client-app-id <id>', 'the client application (parkbench admin client-app create, or the demo one)')
    .option('--client-secret <secret>', "the client application's secret")
    .option('--email <email>', "the driver's e-mail")
    .option('--password <password>', "the driver's password")
    .option('--register', 'register the driver first (POST /api/car_driver)')
    .option('--first-name <name>', 'with --register', 'Test')
    .option('--last-name <name>', 'with --register', 'Driver')
    .option('--phone <phone>', 'with --register', '+10000000000')
    .option('--parking <id>', 'the secured parking')
    .option('--mqtt <url>', 'the broker the boxes (or their gateway) are on', 'mqtt://127.0.0.1:1883')
    .option('--mqtt-username <name>', 'an operator account (parkbench start prints one)')
    .option('--mqtt-password <password>', "the operator account's password")
    .option('--topic-prefix <prefix>', 'first MQTT topic level', process.env.MQTT_TOPIC_PREFIX ?? 'parkbench')
    .option('--entrance-box <module_id>', "the entrance box (default: the smart key's first access point)")
    .option('--exit-box <module_id>', "the exit box (default: the smart key's last access point)")
    .option('--no-pay', 'leave the session unpaid (the exit then leaves it exiting, not finished)')
    .option(
      '--offline',
      'keep the box logs instead of uploading them, as a phone without network; upload them later with --upload',
    )
    .option('--offline-file <file>', 'where --offline keeps the box logs', 'data/app-offline-box-logs.json')
    .option('--upload <file>', 'only upload box logs kept by --offline (marked offline: true), then stop')
    .option('--answer-ms <ms>', 'how long a box may take to answer', '5000')
    .action(async (flags: AppFlags) => {
      const { runAppCommand } = await import('../run/app.js');
      await runAppCommand(flags);
    });
}
