// Stand-ins for the switch tools no machine here has a device for: small
// executables named `usbrelay` and `uhubctl` in a folder put first on PATH.
// They speak the real tools' CLI (arguments, output, exit status), keep the
// switch's state in a file, and append each call's arguments to calls.log.
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';

export interface StandIns {
  readonly folder: string;
  /** The environment that finds the stand-ins first. */
  readonly env: NodeJS.ProcessEnv;
  /** Each call's arguments, one line per call, in order. */
  calls(): Promise<string[]>;
  /** The switch state files' text: `usbrelay` lists relays as SERIAL_N=0|1, `uhubctl` holds `port N on|off`. */
  state(tool: 'usbrelay' | 'uhubctl'): Promise<string>;
}

// darrylb123/usbrelay: no argument lists every relay as SERIAL_N=STATE; each
// SERIAL_N=0|1 argument sets one; a relay not found is reported on stderr and
// the exit status is non-zero. The stand-in has one board, HURTM, with 2 relays.
const USBRELAY = `#!/bin/sh
here=$(dirname "$0")
echo "$*" >> "$here/calls.log"
state="$here/usbrelay.state"
[ -f "$state" ] || printf 'HURTM_1=0\\nHURTM_2=0\\n' > "$state"
if [ $# -eq 0 ]; then cat "$state"; exit 0; fi
status=0
for arg in "$@"; do
  relay=\${arg%%=*}; value=\${arg#*=}
  if grep -q "^$relay=" "$state" && { [ "$value" = 0 ] || [ "$value" = 1 ]; }; then
    echo "Orig: $arg, Serial: \${relay%_*}, Relay: \${relay##*_} State: $value" >&2
    sed -i "s/^$relay=.*/$relay=$value/" "$state"
  else
    echo "Device: $relay not found" >&2
    status=1
  fi
done
exit $status
`;

// mvp/uhubctl: -l LOCATION -p PORTS -a on|off|cycle [-d DELAY]; prints the
// port's status before and after; a location with no hub: "No compatible
// devices detected at location ...!" on stderr, exit 1. One hub, 1-1, of 4 ports.
const UHUBCTL = `#!/bin/sh
here=$(dirname "$0")
echo "$*" >> "$here/calls.log"
state="$here/uhubctl.state"
[ -f "$state" ] || printf 'port 1 on\\nport 2 on\\nport 3 on\\nport 4 on\\n' > "$state"
location=""; ports=""; action=""
while [ $# -gt 0 ]; do
  case "$1" in
    -l) location=$2; shift 2 ;;
    -p) ports=$2; shift 2 ;;
    -a) action=$2; shift 2 ;;
    -d) shift 2 ;;
    *) echo "unknown option $1" >&2; exit 1 ;;
  esac
done
if [ "$location" != "1-1" ]; then
  echo "No compatible devices detected at location $location!" >&2
  echo "Run with -h to get usage info." >&2
  exit 1
fi
hub="Current status for hub 1-1 [2109:2817 VIA Labs, Inc. USB2.0 Hub, USB 2.10, 4 ports, ppps]"
line() { if grep -q "^port $1 on" "$state"; then echo "  Port $1: 0503 power highspeed enable connect"; else echo "  Port $1: 0000 off"; fi; }
echo "$hub"; line "$ports"
case "$action" in
  on|off) sed -i "s/^port $ports .*/port $ports $action/" "$state"; echo "Sent power $action request" ;;
  cycle) sed -i "s/^port $ports .*/port $ports on/" "$state"; echo "Sent power off request"; echo "Sent power on request" ;;
  *) echo "bad action $action" >&2; exit 1 ;;
esac
echo "New status for hub 1-1 [2109:2817 VIA Labs, Inc. USB2.0 Hub, USB 2.10, 4 ports, ppps]"; line "$ports"
`;

export async function standIns(t: ExecutionContext): Promise<StandIns> {
  const folder = await mkdtemp(join(tmpdir(), 'pb-power-tools-'));
  t.teardown(() => rm(folder, { recursive: true, force: true }));
  for (const [name, script] of [
    ['usbrelay', USBRELAY],
    ['uhubctl', UHUBCTL],
  ] as const) {
    await writeFile(join(folder, name), script);
    await chmod(join(folder, name), 0o755);
  }
  const read = (name: string): Promise<string> => readFile(join(folder, name), 'utf8').catch(() => '');
  return {
    folder,
    env: { ...process.env, PATH: `${folder}:${process.env.PATH ?? ''}` },
    calls: async () => (await read('calls.log')).split('\n').filter((line) => line !== ''),
    state: (tool) => read(`${tool}.state`),
  };
}
