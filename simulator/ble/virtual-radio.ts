// A virtual BLE radio: peripherals (simulated boxes) on one side, noble
// centrals on the other through noble's own injection point, its bindings
// object (`@abandonware/noble/with-bindings`). The central's code is noble's,
// unmodified: only the radio underneath is software. Across processes the
// same bindings are served over noble's NOBLE_WEBSOCKET protocol
// (websocket-radio.ts).
import { EventEmitter } from 'node:events';

/** UUIDs as noble writes them: lowercase hex, no dashes. */
export function nobleUuid(uuid: string): string {
  return uuid.replaceAll('-', '').toLowerCase();
}

export interface GattCharacteristic {
  readonly uuid: string;
  readonly properties: readonly ('read' | 'write' | 'writeWithoutResponse' | 'notify' | 'indicate')[];
}

/** One central's connection to a peripheral, as the peripheral sees it. */
export interface CentralConnection {
  /** Sends a notification, if the central subscribed to that characteristic. */
  notify(characteristicUuid: string, data: Buffer): void;
  /** The ATT MTU agreed for this connection. */
  readonly mtu: number;
}

/** What a peripheral must offer the radio. */
export interface VirtualPeripheral {
  /** MAC address, `AA:BB:CC:DD:EE:FF`. */
  readonly address: string;
  readonly localName: string;
  readonly serviceUuid: string;
  readonly characteristics: readonly GattCharacteristic[];
  readonly mtu: number;
  connected(connection: CentralConnection): void;
  disconnected(connection: CentralConnection): void;
  /** A write (with response) from the central; the radio acknowledges it once this returns. */
  written(connection: CentralConnection, characteristicUuid: string, data: Buffer): void;
}

const RSSI = -48;

/** The air between peripherals and centrals. */
export class VirtualRadio extends EventEmitter<{
  added: [peripheral: VirtualPeripheral];
  removed: [peripheral: VirtualPeripheral];
}> {
  readonly #peripherals = new Map<string, VirtualPeripheral>();

  /** The id noble gives a peripheral: its address, lowercase, without colons. */
  static peripheralId(peripheral: VirtualPeripheral): string {
    return peripheral.address.replaceAll(':', '').toLowerCase();
  }

  add(peripheral: VirtualPeripheral): void {
    this.#peripherals.set(VirtualRadio.peripheralId(peripheral), peripheral);
    this.emit('added', peripheral);
  }

  remove(peripheral: VirtualPeripheral): void {
    if (this.#peripherals.delete(VirtualRadio.peripheralId(peripheral))) this.emit('removed', peripheral);
  }

  get(peripheralId: string): VirtualPeripheral | undefined {
    return this.#peripherals.get(peripheralId);
  }

  get peripherals(): VirtualPeripheral[] {
    return [...this.#peripherals.values()];
  }

  /** A noble bindings object for one central: pass it to
   * `@abandonware/noble/with-bindings`. */
  createBindings(): VirtualNobleBindings {
    return new VirtualNobleBindings(this);
  }
}

interface Link {
  readonly peripheral: VirtualPeripheral;
  readonly connection: CentralConnection;
  readonly subscriptions: Set<string>;
}

/**
 * noble's bindings interface (the methods noble calls, the events it
 * listens to), answered by the virtual radio. Every answer comes on a later
 * tick, as from a real radio.
 */
export class VirtualNobleBindings extends EventEmitter {
  readonly #radio: VirtualRadio;
  readonly #links = new Map<string, Link>();
  #scanning: { serviceUuids: string[] } | undefined;
  readonly #onAdded = (peripheral: VirtualPeripheral): void => {
    if (this.#scanning !== undefined) this.#advertise(peripheral, this.#scanning.serviceUuids);
  };
  readonly #onRemoved = (peripheral: VirtualPeripheral): void => {
    const id = VirtualRadio.peripheralId(peripheral);
    if (this.#links.has(id)) this.#drop(id, 'peripheral gone');
  };

  constructor(radio: VirtualRadio) {
    super();
    this.#radio = radio;
    radio.on('added', this.#onAdded);
    radio.on('removed', this.#onRemoved);
  }

  init(): void {
    this.#later('stateChange', 'poweredOn');
  }

  /** Detaches from the radio (the central went away). */
  close(): void {
    this.#radio.off('added', this.#onAdded);
    this.#radio.off('removed', this.#onRemoved);
    for (const id of [...this.#links.keys()]) this.#drop(id, 'central closed');
    this.#scanning = undefined;
  }

  setScanParameters(): void {
    this.#later('scanParametersSet');
  }

  startScanning(serviceUuids: string[] = [], allowDuplicates = false): void {
    this.#scanning = { serviceUuids: serviceUuids.map(nobleUuid) };
    this.#later('scanStart', !allowDuplicates);
    for (const peripheral of this.#radio.peripherals) this.#advertise(peripheral, this.#scanning.serviceUuids);
  }

  stopScanning(): void {
    this.#scanning = undefined;
    this.#later('scanStop');
  }

  connect(peripheralId: string): void {
    const peripheral = this.#radio.get(peripheralId);
    if (peripheral === undefined) {
      this.#later('connect', peripheralId, new Error('peripheral out of range'));
      return;
    }
    if (this.#links.has(peripheralId)) {
      this.#later('connect', peripheralId);
      return;
    }
    const subscriptions = new Set<string>();
    const connection: CentralConnection = {
      mtu: peripheral.mtu,
      notify: (characteristicUuid, data) => {
        const uuid = nobleUuid(characteristicUuid);
        if (subscriptions.has(uuid) && this.#links.get(peripheralId)?.connection === connection) {
          this.#later('read', peripheralId, nobleUuid(peripheral.serviceUuid), uuid, Buffer.from(data), true);
        }
      },
    };
    this.#links.set(peripheralId, { peripheral, connection, subscriptions });
    this.#later('onMtu', peripheralId, peripheral.mtu);
    this.#later('connect', peripheralId);
    peripheral.connected(connection);
  }

  cancelConnect(peripheralId: string): void {
    this.disconnect(peripheralId);
  }

  disconnect(peripheralId: string): void {
    this.#drop(peripheralId, 'local');
  }

  updateRssi(peripheralId: string): void {
    this.#later('rssiUpdate', peripheralId, RSSI);
  }

  discoverServices(peripheralId: string, uuids: string[] = []): void {
    const link = this.#links.get(peripheralId);
    const service = link === undefined ? [] : [nobleUuid(link.peripheral.serviceUuid)];
    const wanted = uuids.map(nobleUuid);
    this.#later(
      'servicesDiscover',
      peripheralId,
      wanted.length === 0 ? service : service.filter((uuid) => wanted.includes(uuid)),
    );
  }

  discoverIncludedServices(peripheralId: string, serviceUuid: string): void {
    this.#later('includedServicesDiscover', peripheralId, serviceUuid, []);
  }

  discoverCharacteristics(peripheralId: string, serviceUuid: string, characteristicUuids: string[] = []): void {
    const link = this.#links.get(peripheralId);
    const wanted = characteristicUuids.map(nobleUuid);
    const characteristics = (link?.peripheral.characteristics ?? [])
      .map((characteristic) => ({ uuid: nobleUuid(characteristic.uuid), properties: [...characteristic.properties] }))
      .filter((characteristic) => wanted.length === 0 || wanted.includes(characteristic.uuid));
    this.#later('characteristicsDiscover', peripheralId, serviceUuid, characteristics);
  }

  discoverDescriptors(peripheralId: string, serviceUuid: string, characteristicUuid: string): void {
    this.#later('descriptorsDiscover', peripheralId, serviceUuid, characteristicUuid, []);
  }

  read(peripheralId: string, serviceUuid: string, characteristicUuid: string): void {
    this.#later('read', peripheralId, serviceUuid, characteristicUuid, Buffer.alloc(0), false);
  }

  write(
    peripheralId: string,
    serviceUuid: string,
    characteristicUuid: string,
    data: Buffer,
    withoutResponse = false,
  ): void {
    const link = this.#links.get(peripheralId);
    if (link === undefined) return; // not connected: a real stack would fail the write; noble waits for a disconnect
    link.peripheral.written(link.connection, nobleUuid(characteristicUuid), Buffer.from(data));
    if (!withoutResponse) this.#later('write', peripheralId, serviceUuid, characteristicUuid);
  }

  notify(peripheralId: string, serviceUuid: string, characteristicUuid: string, notify: boolean): void {
    const link = this.#links.get(peripheralId);
    const uuid = nobleUuid(characteristicUuid);
    if (link !== undefined) {
      if (notify) link.subscriptions.add(uuid);
      else link.subscriptions.delete(uuid);
    }
    this.#later('notify', peripheralId, serviceUuid, characteristicUuid, notify);
  }

  broadcast(peripheralId: string, serviceUuid: string, characteristicUuid: string, broadcast: boolean): void {
    this.#later('broadcast', peripheralId, serviceUuid, characteristicUuid, broadcast);
  }

  reset(): void {
    for (const id of [...this.#links.keys()]) this.#drop(id, 'reset');
  }

  #advertise(peripheral: VirtualPeripheral, serviceFilter: string[]): void {
    const service = nobleUuid(peripheral.serviceUuid);
    if (serviceFilter.length > 0 && !serviceFilter.includes(service)) return;
    const advertisement = {
      localName: peripheral.localName,
      serviceUuids: [service],
      txPowerLevel: undefined,
      manufacturerData: undefined,
      serviceData: [],
    };
    this.#later(
      'discover',
      VirtualRadio.peripheralId(peripheral),
      peripheral.address.toLowerCase(),
      'public',
      true,
      advertisement,
      RSSI,
      true,
    );
  }

  #drop(peripheralId: string, reason: string): void {
    const link = this.#links.get(peripheralId);
    if (link === undefined) return;
    this.#links.delete(peripheralId);
    link.peripheral.disconnected(link.connection);
    this.#later('disconnect', peripheralId, reason);
  }

  #later(event: string, ...args: unknown[]): void {
    setImmediate(() => this.emit(event, ...args));
  }
}
