// A capture of one box (module 9101, entrance of parking 7) on all three
// links, written with lib/capture as the tools write theirs: real frames
// sealed and signed with firmware-protocol, answered by the protocol's own
// box (decide), serial bytes split into runs by WireRuns, BLE frames in
// chunks at MTU 23, MQTT messages with their JSON, an opened record after
// every frame. Among them: every command kind, responses of eight
// statuses, the serial runs that make no frame (bad CRC, bad COBS, an
// undefined link type, an oversize run, a lone delimiter, bytes cut off by
// the end), and opened records of every outcome. It returns what it wrote,
// frame by frame, for tests to compare with what a reader shows.
import { CaptureFile } from '../../lib/capture/capture-file.js';
import { CaptureDirection, LinkCapture } from '../../lib/capture/link-capture.js';
import { openedCommandData, openedResponseData, type BoxKeys } from '../../lib/capture/opened.js';
import { WireRuns } from '../../lib/capture/wire-runs.js';
import {
  Barrier,
  FrameKind,
  LinkType,
  chunkFrame,
  cobsEncode,
  crc16,
  decide,
  encodeLinkFrame,
  initialBoxState,
  parseCommandHeader,
  parseResponse,
  sealCommand,
  sealRawCommand,
  signAccessCommand,
  statusReport,
  type AccessBody,
  type BoxConfig,
  type BoxConditions,
  type BoxState,
  type ParsedResponse,
} from '../../firmware-protocol/index.js';
import {
  HOUR,
  T0,
  boxKey,
  issuerPrivate,
  issuerPublic,
  otherIssuerPublic,
  otherKey,
  parkingKey,
} from './protocol-fixtures.js';

export const SAMPLE_MODULE_ID = 9101;
export const SAMPLE_PARKING_ID = 7;
export const SAMPLE_SERIAL_PORT = '/dev/ttyUSB0';
export const SAMPLE_MQTT_URL = 'mqtt://127.0.0.1:1883';

/** A command frame as recorded: on which frame of the file, and its header. */
export interface WrittenCommand {
  readonly frame: number;
  readonly link: 'serial' | 'ble' | 'mqtt';
  readonly bytes: Buffer;
  readonly kind: number;
  readonly keyId: number;
  readonly scope: number;
}

export interface WrittenResponse {
  readonly frame: number;
  readonly link: 'serial' | 'ble' | 'mqtt';
  readonly bytes: Buffer;
  readonly fields: ParsedResponse;
}

export interface WrittenOpened {
  readonly frame: number;
  readonly link: 'serial' | 'ble' | 'mqtt';
  readonly direction: CaptureDirection;
  readonly data: Buffer;
}

export interface WrittenRun {
  readonly frame: number;
  readonly bytes: Buffer;
  readonly frameMade: boolean;
}

export interface SampleCapture {
  readonly path: string;
  readonly packets: number;
  readonly commands: readonly WrittenCommand[];
  readonly responses: readonly WrittenResponse[];
  readonly opened: readonly WrittenOpened[];
  /** Every serial run, in both directions. */
  readonly runs: readonly WrittenRun[];
  readonly chunks: readonly { frame: number; direction: CaptureDirection; bytes: Buffer }[];
  readonly messages: readonly { frame: number; direction: CaptureDirection; topic: string; payload: string }[];
  /** Frames by name, for what the lists do not single out. */
  readonly named: ReadonlyMap<string, number>;
}

const config: BoxConfig = {
  moduleId: SAMPLE_MODULE_ID,
  parkingId: SAMPLE_PARKING_ID,
  direction: 'entrance',
  parkingKey,
  parkingKeyNext: null,
  boxKey,
  skewSeconds: 120,
  minBatteryMv: 3300,
  // One entry: a REVOKE of two answers REVOCATION_FULL.
  revocationCapacity: 1,
};

const conditions: BoxConditions = { boxTime: T0 + 60, batteryMv: 3712, barrier: Barrier.CLOSED, jammed: false };

const accessBody: AccessBody = {
  notBefore: T0,
  notAfter: T0 + 2 * HOUR,
  maxEntries: 2,
  maxExits: 1,
  moduleIds: [SAMPLE_MODULE_ID, 9102],
};

/** 32 modules, the box's among them: the longest frame (225 bytes, 12 chunks at MTU 23). */
const thirtyTwoModules = Array.from({ length: 32 }, (_, index) => SAMPLE_MODULE_ID - 16 + index);

/** A link frame of any type byte, its CRC as `crc` makes it from the right one; COBS and delimiter included. */
function linkFrameWithCrc(type: number, payload: Buffer, crc: (right: number) => number): Buffer {
  const raw = Buffer.concat([Buffer.from([type]), payload, Buffer.alloc(2)]);
  raw.writeUInt16BE(crc(crc16(raw, 0, raw.length - 2)), raw.length - 2);
  return Buffer.concat([cobsEncode(raw), Buffer.from([0])]);
}

/** Writes the sample capture to `path` (one file, no rotation). */
export function writeSampleCapture(path: string): SampleCapture {
  const file = new CaptureFile({ path, application: 'parkbench test sample' });
  let clock = BigInt(T0) * 1_000_000n + 60_000_000n;
  const nowMicros = (): bigint => (clock += 1_500n);
  const serial = new LinkCapture(file, 'serial', SAMPLE_SERIAL_PORT, { description: 'parkbench sim', nowMicros });
  const ble = new LinkCapture(file, 'ble', `PB-${SAMPLE_MODULE_ID}`, { description: 'parkbench sim', nowMicros });
  const mqtt = new LinkCapture(file, 'mqtt', SAMPLE_MQTT_URL, { description: 'parkbench sim', nowMicros });
  const id = SAMPLE_MODULE_ID;

  const commands: WrittenCommand[] = [];
  const responses: WrittenResponse[] = [];
  const opened: WrittenOpened[] = [];
  const runs: WrittenRun[] = [];
  const chunks: { frame: number; direction: CaptureDirection; bytes: Buffer }[] = [];
  const messages: { frame: number; direction: CaptureDirection; topic: string; payload: string }[] = [];
  const named = new Map<string, number>();

  let state: BoxState = initialBoxState({ issuerKey: issuerPublic });
  const keys = (): BoxKeys => ({
    parkingKeys: [parkingKey],
    boxKey,
    issuerKeys: [state.issuerKey, state.issuerKeyPrevious],
  });
  const answer = (command: Buffer): Buffer => {
    const decision = decide(config, state, conditions, command);
    state = decision.state;
    return decision.response;
  };
  const noteCommand = (link: WrittenCommand['link'], bytes: Buffer): void => {
    const parsed = parseCommandHeader(bytes);
    if (!parsed.ok) throw new Error('the sample sends only commands whose header parses');
    const { kind, keyId, scope } = parsed.header;
    commands.push({ frame: file.packets, link, bytes, kind, keyId, scope });
  };
  const noteResponse = (link: WrittenResponse['link'], bytes: Buffer): void => {
    responses.push({ frame: file.packets, link, bytes, fields: parseResponse(bytes) });
  };
  const links = { serial, ble, mqtt };
  const recordOpened = (link: WrittenOpened['link'], direction: CaptureDirection, data: Buffer | null): void => {
    if (data === null) throw new Error('the sample opens only commands whose header parses');
    links[link].opened(direction, data, id);
    opened.push({ frame: file.packets, link, direction, data });
  };

  // Serial: bytes through WireRuns, pushed in pieces that split runs anywhere.
  const wireRuns = new WireRuns();
  const wire = (direction: CaptureDirection, bytes: Buffer, pieceLength = 7): void => {
    for (let at = 0; at < bytes.length; at += pieceLength) {
      for (const run of wireRuns.push(bytes.subarray(at, at + pieceLength))) {
        serial.wire(direction, run.bytes, { moduleId: id, notAFrame: !run.frame });
        runs.push({ frame: file.packets, bytes: run.bytes, frameMade: run.frame });
      }
    }
  };
  const serialExchange = (command: Buffer, name: string): Buffer => {
    wire(CaptureDirection.toBox, encodeLinkFrame(LinkType.COMMAND, command));
    noteCommand('serial', command);
    named.set(`${name} command`, file.packets);
    recordOpened('serial', CaptureDirection.toBox, openedCommandData(command, keys()));
    const response = answer(command);
    wire(CaptureDirection.fromBox, encodeLinkFrame(LinkType.RESPONSE, response));
    noteResponse('serial', response);
    named.set(`${name} response`, file.packets);
    recordOpened('serial', CaptureDirection.fromBox, openedResponseData(response, boxKey, command));
    return response;
  };

  wire(CaptureDirection.toBox, encodeLinkFrame(LinkType.STATUS_REQUEST, Buffer.alloc(0)));
  named.set('status request', file.packets);
  const report = statusReport(config, state, conditions);
  state = report.state;
  wire(CaptureDirection.fromBox, encodeLinkFrame(LinkType.STATUS_REPORT, report.response));
  noteResponse('serial', report.response);
  named.set('status report', file.packets);

  const access = sealCommand({ key: parkingKey, kind: FrameKind.ACCESS, keyId: 42, scope: 7, body: accessBody });
  serialExchange(access, 'serial ACCESS');
  const forged = sealCommand({ key: otherKey, kind: FrameKind.ACCESS, keyId: 43, scope: 7, body: accessBody });
  serialExchange(forged, 'serial forged ACCESS');

  // Serial runs that make no frame.
  wire(
    CaptureDirection.toBox,
    linkFrameWithCrc(LinkType.COMMAND, access, (crc) => crc ^ 0x0001),
  );
  named.set('bad CRC', file.packets);
  wire(CaptureDirection.toBox, Buffer.from([0x05, 0x01, 0x02, 0x00]));
  named.set('bad COBS', file.packets);
  wire(
    CaptureDirection.toBox,
    linkFrameWithCrc(0x03, Buffer.from([0xaa, 0xbb]), (crc) => crc),
  );
  named.set('undefined link type', file.packets);
  wire(CaptureDirection.fromBox, Buffer.concat([Buffer.alloc(1500, 0x55), Buffer.from([0])]), 100);
  named.set('oversize first piece', file.packets - 1);
  named.set('oversize rest', file.packets);
  wire(CaptureDirection.fromBox, Buffer.from([0]));
  named.set('lone delimiter', file.packets);

  // BLE: an ACCESS_SIGNED of 32 modules in 12 chunks at MTU 23, and its answer in 2.
  const signed = signAccessCommand({
    privateKey: issuerPrivate,
    keyId: 77,
    scope: 7,
    body: { ...accessBody, maxEntries: 1, moduleIds: thirtyTwoModules },
  });
  for (const chunk of chunkFrame(signed, 23)) {
    ble.chunk(CaptureDirection.toBox, chunk, { moduleId: id });
    chunks.push({ frame: file.packets, direction: CaptureDirection.toBox, bytes: chunk });
  }
  ble.frame(CaptureDirection.toBox, signed, id);
  noteCommand('ble', signed);
  recordOpened('ble', CaptureDirection.toBox, openedCommandData(signed, keys()));
  const signedAnswer = answer(signed);
  for (const chunk of chunkFrame(signedAnswer, 23)) {
    ble.chunk(CaptureDirection.fromBox, chunk, { moduleId: id });
    chunks.push({ frame: file.packets, direction: CaptureDirection.fromBox, bytes: chunk });
  }
  ble.frame(CaptureDirection.fromBox, signedAnswer, id);
  noteResponse('ble', signedAnswer);
  recordOpened('ble', CaptureDirection.fromBox, openedResponseData(signedAnswer, boxKey, signed));

  // MQTT: command and response messages, each followed by its frame and opened record.
  const receivedAt = new Date((T0 + 60) * 1000).toISOString();
  const mqttExchange = (command: Buffer, name: string, tamper = false): void => {
    const commandTopic = `parkbench/boxes/${id}/command`;
    const commandJson = JSON.stringify({ command: command.toString('base64'), context: { request_id: name } });
    mqtt.message(CaptureDirection.toBox, commandTopic, Buffer.from(commandJson), id);
    messages.push({
      frame: file.packets,
      direction: CaptureDirection.toBox,
      topic: commandTopic,
      payload: commandJson,
    });
    mqtt.frame(CaptureDirection.toBox, command, id);
    noteCommand('mqtt', command);
    named.set(`${name} command`, file.packets);
    recordOpened('mqtt', CaptureDirection.toBox, openedCommandData(command, keys()));
    const response = Buffer.from(answer(command));
    // A tag changed on the way: the opened record says it does not verify.
    if (tamper) response[31] = (response[31] ?? 0) ^ 0x80;
    const responseTopic = `parkbench/boxes/${id}/response`;
    const responseJson = JSON.stringify({
      command: command.toString('base64'),
      response: response.toString('base64'),
      received_at: receivedAt,
      via: 'mqtt',
      context: { request_id: name },
    });
    mqtt.message(CaptureDirection.fromBox, responseTopic, Buffer.from(responseJson), id);
    messages.push({
      frame: file.packets,
      direction: CaptureDirection.fromBox,
      topic: responseTopic,
      payload: responseJson,
    });
    mqtt.frame(CaptureDirection.fromBox, response, id);
    noteResponse('mqtt', response);
    named.set(`${name} response`, file.packets);
    recordOpened('mqtt', CaptureDirection.fromBox, openedResponseData(response, boxKey, command));
  };
  const control = { key: boxKey, scope: id } as const;
  mqttExchange(sealCommand({ ...control, kind: FrameKind.BATTERY_QUERY, keyId: 6 }), 'BATTERY_QUERY');
  mqttExchange(sealCommand({ ...control, kind: FrameKind.TIME_SET, keyId: 7, body: { time: T0 + HOUR } }), 'TIME_SET');
  mqttExchange(
    sealCommand({
      ...control,
      kind: FrameKind.REVOKE,
      keyId: 8,
      body: {
        entries: [
          { keyId: 42, until: T0 + 2 * HOUR },
          { keyId: 43, until: T0 + 3 * HOUR },
        ],
      },
    }),
    'REVOKE',
  );
  mqttExchange(
    sealCommand({
      ...control,
      kind: FrameKind.SET_ISSUER,
      keyId: 9,
      body: { issuerKey: otherIssuerPublic, issuerKeyPrevious: issuerPublic },
    }),
    'SET_ISSUER',
  );
  mqttExchange(
    sealCommand({
      ...control,
      kind: FrameKind.SET_ISSUER,
      keyId: 9,
      body: { issuerKey: otherIssuerPublic, issuerKeyPrevious: null },
    }),
    'SET_ISSUER replayed',
    true,
  );
  mqttExchange(
    sealRawCommand({ ...control, kind: FrameKind.TIME_SET, keyId: 10, plaintext: Buffer.from([1, 2, 3]) }),
    'TIME_SET malformed',
  );
  mqttExchange(
    sealCommand({ key: otherKey, kind: FrameKind.ACCESS, keyId: 44, scope: 7, body: accessBody }),
    'mqtt forged ACCESS',
  );
  mqttExchange(
    sealCommand({
      key: parkingKey,
      kind: FrameKind.ACCESS,
      keyId: 45,
      scope: 7,
      body: { ...accessBody, notBefore: T0 - 2 * HOUR, notAfter: T0 - HOUR },
    }),
    'expired ACCESS',
  );

  mqttExchange(
    signAccessCommand({
      privateKey: issuerPrivate,
      keyId: 77,
      scope: 7,
      body: { ...accessBody, maxEntries: 1 },
    }),
    'ACCESS_SIGNED again',
  );
  mqttExchange(
    sealCommand({ key: parkingKey, kind: FrameKind.ACCESS, keyId: 46, scope: 8, body: accessBody }),
    'wrong parking ACCESS',
  );

  // The link closed in the middle of a run: what was held, recorded as no frame.
  wire(CaptureDirection.fromBox, Buffer.from([0x04, 0x81, 0x01]));
  const held = wireRuns.flush();
  if (held === undefined) throw new Error('bytes were held');
  serial.wire(CaptureDirection.fromBox, held.bytes, { moduleId: id, notAFrame: true });
  runs.push({ frame: file.packets, bytes: held.bytes, frameMade: false });
  named.set('cut run', file.packets);

  file.close();
  return { path, packets: file.packets, commands, responses, opened, runs, chunks, messages, named };
}
