// The usbrelay and uhubctl drivers against stand-ins of the real tools put
// first on PATH (stand-ins.ts): the arguments each call sends, the state the
// switch ends in, and a failure of the tool as one PowerError line.
import test from 'ava';
import { systemClock } from '../../lib/clock.js';
import { PowerError } from '../../lib/power/power-driver.js';
import { UsbrelayPowerDriver } from '../../lib/power/usbrelay-driver.js';
import { UhubctlPowerDriver } from '../../lib/power/uhubctl-driver.js';
import { standIns } from './stand-ins.js';

test('usbrelay: on closes the relay (SERIAL_N=1), off opens it, cycle is off then on', async (t) => {
  const tools = await standIns(t);
  const relay = new UsbrelayPowerDriver({
    relay: 'HURTM_2',
    timeoutMs: 5_000,
    settleMs: 1_500,
    offMs: 10,
    clock: systemClock,
    env: tools.env,
  });
  t.is(relay.description, 'usbrelay HURTM_2');
  t.is(relay.settleMs, 1_500);
  await relay.on();
  t.is(await tools.state('usbrelay'), 'HURTM_1=0\nHURTM_2=1\n');
  await relay.off();
  t.is(await tools.state('usbrelay'), 'HURTM_1=0\nHURTM_2=0\n');
  await relay.cycle();
  t.is(await tools.state('usbrelay'), 'HURTM_1=0\nHURTM_2=1\n');
  t.deepEqual(await tools.calls(), ['HURTM_2=1', 'HURTM_2=0', 'HURTM_2=0', 'HURTM_2=1']);
});

test('usbrelay: a relay the board does not have is a PowerError naming the command, exit code and reason', async (t) => {
  const tools = await standIns(t);
  const relay = new UsbrelayPowerDriver({
    relay: 'HURTM_7',
    timeoutMs: 5_000,
    settleMs: 0,
    offMs: 10,
    clock: systemClock,
    env: tools.env,
  });
  await t.throwsAsync(relay.off(), {
    instanceOf: PowerError,
    message: '`usbrelay HURTM_7=0` exit code 1: Device: HURTM_7 not found',
  });
});

test('usbrelay: not installed is a PowerError saying so', async (t) => {
  const relay = new UsbrelayPowerDriver({
    relay: 'HURTM_1',
    timeoutMs: 5_000,
    settleMs: 0,
    offMs: 10,
    clock: systemClock,
    env: { PATH: '/nonexistent' },
  });
  await t.throwsAsync(relay.on(), {
    instanceOf: PowerError,
    message: /^`usbrelay HURTM_1=1` exit code 127: .*not found$/,
  });
});

test('uhubctl: -l HUB -p PORT -a on|off, and its own cycle with the off time in whole seconds', async (t) => {
  const tools = await standIns(t);
  const hub = new UhubctlPowerDriver({
    hub: '1-1',
    port: 3,
    timeoutMs: 5_000,
    settleMs: 0,
    offMs: 1_500,
    env: tools.env,
  });
  t.is(hub.description, 'uhubctl hub 1-1 port 3');
  await hub.off();
  t.regex(await tools.state('uhubctl'), /^port 3 off$/m);
  await hub.on();
  t.regex(await tools.state('uhubctl'), /^port 3 on$/m);
  await hub.cycle();
  t.deepEqual(await tools.calls(), ['-l 1-1 -p 3 -a off', '-l 1-1 -p 3 -a on', '-l 1-1 -p 3 -a cycle -d 2']);
});

test('uhubctl: a hub that is not there is a PowerError with its last stderr line', async (t) => {
  const tools = await standIns(t);
  const hub = new UhubctlPowerDriver({
    hub: '3-2',
    port: 1,
    timeoutMs: 5_000,
    settleMs: 0,
    offMs: 1_000,
    env: tools.env,
  });
  await t.throwsAsync(hub.on(), {
    instanceOf: PowerError,
    message: '`uhubctl -l 3-2 -p 1 -a on` exit code 1: Run with -h to get usage info.',
  });
});
