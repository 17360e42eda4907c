// The virtual radio across processes: a WebSocket server speaking noble's
// NOBLE_WEBSOCKET protocol (noble's lib/websocket/bindings.js is the client).
// A gateway started with NOBLE_WEBSOCKET=1 connects to ws://localhost:2846
// (noble fixes the port) and reaches the simulated boxes as if over the air.
import { once } from 'node:events';
import { WebSocketServer, type WebSocket } from 'ws';
import { silentLogger, type Logger } from '../../lib/logger.js';
import type { VirtualNobleBindings, VirtualRadio } from './virtual-radio.js';
import { messageOf } from '../../lib/message-of.js';

/** The port noble's WebSocket bindings connect to (0xB1E). */
export const NOBLE_WEBSOCKET_PORT = 0xb1e;

/** Events of the bindings and the fields noble's WebSocket client reads from each. */
const eventFields: Record<string, readonly string[]> = {
  stateChange: ['state'],
  discover: ['peripheralUuid', 'address', 'addressType', 'connectable', 'advertisement', 'rssi'],
  connect: ['peripheralUuid'],
  disconnect: ['peripheralUuid'],
  rssiUpdate: ['peripheralUuid', 'rssi'],
  servicesDiscover: ['peripheralUuid', 'serviceUuids'],
  includedServicesDiscover: ['peripheralUuid', 'serviceUuid', 'includedServiceUuids'],
  characteristicsDiscover: ['peripheralUuid', 'serviceUuid', 'characteristics'],
  read: ['peripheralUuid', 'serviceUuid', 'characteristicUuid', 'data', 'isNotification'],
  write: ['peripheralUuid', 'serviceUuid', 'characteristicUuid'],
  broadcast: ['peripheralUuid', 'serviceUuid', 'characteristicUuid', 'state'],
  notify: ['peripheralUuid', 'serviceUuid', 'characteristicUuid', 'state'],
  descriptorsDiscover: ['peripheralUuid', 'serviceUuid', 'characteristicUuid', 'descriptors'],
};

/** The commands noble's WebSocket client sends, as calls on the bindings. */
const actions: Record<string, (bindings: VirtualNobleBindings, command: Record<string, unknown>) => void> = {
  startScanning: (b, c) => b.startScanning(stringArray(c.serviceUuids), c.allowDuplicates === true),
  stopScanning: (b) => b.stopScanning(),
  connect: (b, c) => b.connect(text(c.peripheralUuid)),
  disconnect: (b, c) => b.disconnect(text(c.peripheralUuid)),
  updateRssi: (b, c) => b.updateRssi(text(c.peripheralUuid)),
  discoverServices: (b, c) => b.discoverServices(text(c.peripheralUuid), stringArray(c.uuids)),
  discoverIncludedServices: (b, c) => b.discoverIncludedServices(text(c.peripheralUuid), text(c.serviceUuid)),
  discoverCharacteristics: (b, c) =>
    b.discoverCharacteristics(text(c.peripheralUuid), text(c.serviceUuid), stringArray(c.characteristicUuids)),
  read: (b, c) => b.read(text(c.peripheralUuid), text(c.serviceUuid), text(c.characteristicUuid)),
  write: (b, c) =>
    b.write(
      text(c.peripheralUuid),
      text(c.serviceUuid),
      text(c.characteristicUuid),
      Buffer.from(text(c.data), 'hex'),
      c.withoutResponse === true,
    ),
  broadcast: (b, c) =>
    b.broadcast(text(c.peripheralUuid), text(c.serviceUuid), text(c.characteristicUuid), c.broadcast === true),
  notify: (b, c) =>
    b.notify(text(c.peripheralUuid), text(c.serviceUuid), text(c.characteristicUuid), c.notify === true),
  discoverDescriptors: (b, c) =>
    b.discoverDescriptors(text(c.peripheralUuid), text(c.serviceUuid), text(c.characteristicUuid)),
};

export interface WebSocketRadioServer {
  readonly port: number;
  /** Centrals connected now. */
  readonly centrals: number;
  /** Commands refused (not JSON, unknown action, bad fields). */
  readonly badCommands: number;
  close(): Promise<void>;
}

export async function serveNobleWebSocket(
  radio: VirtualRadio,
  options: { port?: number; host?: string; logger?: Logger } = {},
): Promise<WebSocketRadioServer> {
  const logger = (options.logger ?? silentLogger).child({ component: 'sim:ble-radio' });
  // noble's client dials "localhost", which may resolve to ::1 or 127.0.0.1.
  const server = new WebSocketServer({ port: options.port ?? NOBLE_WEBSOCKET_PORT, host: options.host ?? 'localhost' });
  await Promise.race([
    once(server, 'listening'),
    once(server, 'error').then(([error]) => Promise.reject(error as Error)),
  ]);
  let centrals = 0;
  let badCommands = 0;
  server.on('connection', (socket: WebSocket) => {
    centrals++;
    const bindings = radio.createBindings();
    const forward =
      (event: string, fields: readonly string[]) =>
      (...args: unknown[]) => {
        const message: Record<string, unknown> = { type: event };
        fields.forEach((field, index) => (message[field] = wireValue(args[index])));
        if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
      };
    for (const [event, fields] of Object.entries(eventFields)) bindings.on(event, forward(event, fields));
    socket.on('message', (data: Buffer) => {
      try {
        const command = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
        const action = actions[text(command.action)];
        if (action === undefined) throw new Error(`unknown action ${String(command.action)}`);
        action(bindings, command);
      } catch (error) {
        badCommands++;
        logger.warn({ reason: messageOf(error) }, 'central command refused');
      }
    });
    socket.on('close', () => {
      centrals--;
      bindings.close();
    });
    // noble's WebSocket client does nothing on init: the radio announces itself.
    bindings.init();
    logger.info({}, 'central connected');
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : (options.port ?? NOBLE_WEBSOCKET_PORT),
    get centrals() {
      return centrals;
    },
    get badCommands() {
      return badCommands;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      }),
  };
}

/** Buffers travel as hex, everything else as JSON. */
function wireValue(value: unknown): unknown {
  if (Buffer.isBuffer(value)) return value.toString('hex');
  if (value instanceof Error) return value.message;
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, wireValue(item)]));
  }
  return value;
}

function text(value: unknown): string {
  if (typeof value !== 'string') throw new Error('a string field is missing');
  return value;
}

function stringArray(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string'))
    throw new Error('a list of UUIDs is malformed');
  return value;
}
