// One factory for every power switch: the bench file's `power:` entry
// (lib/bench/bench-file.ts, checked at load) in, a PowerDriver out.
import { powerPassword, type PowerSpec } from '../bench/bench-file.js';
import { systemClock, type Clock } from '../clock.js';
import { CommandPowerDriver } from './command-driver.js';
import { HttpPowerDriver } from './http-driver.js';
import type { PowerDriver } from './power-driver.js';
import { PromptPowerDriver } from './prompt-driver.js';
import { UhubctlPowerDriver } from './uhubctl-driver.js';
import { UsbrelayPowerDriver } from './usbrelay-driver.js';

export interface PowerDriverContext {
  /** The box the switch powers, for the prompt ("box 4242"). */
  readonly moduleId: number;
  readonly clock?: Clock;
  /** The environment of the commands (default: this process's). */
  readonly env?: NodeJS.ProcessEnv;
  /** The prompt's terminal (default: stdin and stderr). */
  readonly input?: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly output?: NodeJS.WritableStream;
}

export function powerDriverFor(spec: PowerSpec, context: PowerDriverContext): PowerDriver {
  const clock = context.clock ?? systemClock;
  const env = context.env === undefined ? {} : { env: context.env };
  const { settleMs, offMs, timeoutMs } = spec;
  switch (spec.driver) {
    case 'command':
      return new CommandPowerDriver({
        on: spec.on,
        off: spec.off,
        ...(spec.cycle === undefined ? {} : { cycle: spec.cycle }),
        timeoutMs,
        settleMs,
        offMs,
        clock,
        ...env,
      });
    case 'usbrelay':
      return new UsbrelayPowerDriver({ relay: spec.relay, timeoutMs, settleMs, offMs, clock, ...env });
    case 'uhubctl':
      return new UhubctlPowerDriver({ hub: spec.hub, port: spec.port, timeoutMs, settleMs, offMs, ...env });
    case 'http': {
      const password = powerPassword(spec, context.env);
      return new HttpPowerDriver({
        url: spec.url,
        api: spec.api,
        switch: spec.switch,
        timeoutMs,
        settleMs,
        offMs,
        clock,
        ...(password === undefined ? {} : { password }),
      });
    }
    case 'prompt':
      return new PromptPowerDriver({
        settleMs,
        box: `box ${context.moduleId}`,
        ...(context.input === undefined ? {} : { input: context.input }),
        ...(context.output === undefined ? {} : { output: context.output }),
      });
  }
}

/** Why this driver cannot be worked here, or undefined when it can (the
 * prompt driver without a terminal). */
export function powerUnavailable(driver: PowerDriver): string | undefined {
  return driver instanceof PromptPowerDriver && !driver.available ? driver.unavailableReason : undefined;
}
