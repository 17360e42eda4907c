// `parkbench protocol ...`: decode, seal and regenerate test vectors.
import type { Command } from 'commander';

export function registerProtocolCommands(program: Command): void {
  program.command('protocol').description('Box protocol tools: decode frames, seal commands, test vectors');
}
