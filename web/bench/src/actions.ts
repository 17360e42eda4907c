// The page's buttons and the operator API routes behind them (the bench page
// contract). The page sends what the API takes and shows what it answers.
import type { OperatorApi } from './operator-api';
import { ApiCallError } from './operator-api';
import type { ActionResult } from './store';

export const FAULT_ACTIONS = [
  'fault-jam',
  'fault-low-battery',
  'fault-drop',
  'fault-corrupt',
  'fault-delay',
  'fault-offline',
  'fault-clock-skew',
  'fault-clear',
] as const;
export type FaultAction = (typeof FAULT_ACTIONS)[number];

export const COMMAND_ACTIONS = ['open', 'status', 'battery', 'time-set'] as const;
export type CommandAction = (typeof COMMAND_ACTIONS)[number];

/** The simulator's battery at start (simulator/battery.ts, `initialMv`), what `fault-clear` puts back. */
export const NOMINAL_BATTERY_MV = 3900;
/** Below a box's default `min_battery_mv` (3300, lib/provisioning-file.ts; a box answers
 * LOW_BATTERY when the level is strictly below it, so 3300 itself would not do; 3100 as the docs say). */
export const LOW_BATTERY_MV = 3100;

/** The sim/set body of each fault button (POST /api/operator/boxes/:id/sim). */
export const FAULT_BODIES: Record<FaultAction, Record<string, unknown>> = {
  'fault-jam': { jam: true },
  'fault-low-battery': { battery_mv: LOW_BATTERY_MV },
  'fault-drop': { drop_commands: 1 },
  'fault-corrupt': { corrupt_responses: 1 },
  'fault-delay': { delay_ms: 3000 },
  'fault-offline': { offline_seconds: 30 },
  'fault-clock-skew': { clock_offset_seconds: 600 },
  'fault-clear': {
    jam: false,
    drop_commands: 0,
    corrupt_responses: 0,
    delay_ms: 0,
    clock_offset_seconds: 0,
    battery_mv: NOMINAL_BATTERY_MV,
  },
};

export const FAULT_LABELS: Record<FaultAction, string> = {
  'fault-jam': 'Jam',
  'fault-low-battery': 'Low battery',
  'fault-drop': 'Drop',
  'fault-corrupt': 'Corrupt',
  'fault-delay': 'Delay 3 s',
  'fault-offline': 'Offline 30 s',
  'fault-clock-skew': 'Clock +10 min',
  'fault-clear': 'Clear faults',
};

const COMMANDS: Record<CommandAction, string> = {
  open: 'access',
  status: 'status',
  battery: 'battery_query',
  'time-set': 'time_set',
};

export const COMMAND_LABELS: Record<CommandAction, string> = {
  open: 'Open',
  status: 'Status',
  battery: 'Battery',
  'time-set': 'Set time',
};

interface CommandAnswer {
  status?: string | null;
  verified?: boolean;
  barrier?: string | null;
  battery_mv?: number | null;
}

export function failure(error: unknown): ActionResult {
  return { outcome: 'error', text: error instanceof Error ? error.message : 'The action failed.' };
}

/** A command to a box, answered with the protocol status (or the error's message). */
export async function sendCommand(api: OperatorApi, moduleId: number, action: CommandAction): Promise<ActionResult> {
  try {
    const answer = await api.post<CommandAnswer>(`/boxes/${moduleId}/commands`, { command: COMMANDS[action] });
    const parts = [answer.status ?? (answer.verified === false ? 'unverified' : 'sent')];
    if (answer.barrier !== null && answer.barrier !== undefined) parts.push(`barrier ${answer.barrier}`);
    if (answer.battery_mv !== null && answer.battery_mv !== undefined) parts.push(`${answer.battery_mv} mV`);
    const ok = answer.status === null || answer.status === undefined || answer.status === 'OK';
    return { outcome: ok ? 'ok' : 'error', text: parts.join(', ') };
  } catch (error) {
    return failure(error);
  }
}

/** The box's capture (GET /api/operator/boxes/:id/capture, a pcapng file), handed to `save`. */
export async function downloadCapture(
  api: OperatorApi,
  moduleId: number,
  save: (blob: Blob, name: string) => void,
): Promise<ActionResult> {
  try {
    const { blob, name } = await api.file(`/boxes/${moduleId}/capture`, `box-${moduleId}.pcapng`);
    save(blob, name);
    return { outcome: 'ok', text: `capture saved: ${name}` };
  } catch (error) {
    return failure(error);
  }
}

export async function setFault(api: OperatorApi, moduleId: number, action: FaultAction): Promise<ActionResult> {
  try {
    await api.post(`/boxes/${moduleId}/sim`, FAULT_BODIES[action]);
    return { outcome: 'ok', text: `${FAULT_LABELS[action]}: sent` };
  } catch (error) {
    return failure(error);
  }
}

export async function revokeKeys(api: OperatorApi, smartKeyIds: readonly number[]): Promise<ActionResult> {
  if (smartKeyIds.length === 0) return { outcome: 'error', text: 'No smart key of this session is known yet.' };
  try {
    let pending = 0;
    for (const id of smartKeyIds) pending += (await api.post<{ pending: number }>(`/smart_keys/${id}/revoke`)).pending;
    return { outcome: 'ok', text: `revoked ${smartKeyIds.length} key(s), ${pending} REVOKE pending` };
  } catch (error) {
    return failure(error);
  }
}

export async function retryForwarding(api: OperatorApi, parkingId: number): Promise<ActionResult> {
  try {
    const answer = await api.post<{ revived_deliveries: number }>(`/parkings/${parkingId}/forwarding/retry`);
    return { outcome: 'ok', text: `${answer.revived_deliveries} deliveries retried` };
  } catch (error) {
    return failure(error);
  }
}

export { ApiCallError };
