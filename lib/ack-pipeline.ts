// QoS 1 messages worked on several at a time, each acknowledged (PUBACK)
// only once its work is done: the broker keeps, and redelivers to a kept
// session, what was not acknowledged.
//
// Why not MQTT.js's own hooks: a client handles its packets one at a time,
// the next PUBLISH only once the PUBACK of the last is sent (MQTT.js 5.16,
// handlers/publish.js; the same through customHandleAcks and
// handleMessage). The API's ingestion acknowledges after its COMMIT, so
// through an external broker it stored one message a commit: about 250 a
// second on PostgreSQL, 1,800 on SQLite, and past mosquitto's queue of
// 1,000 a client the broker dropped the rest. Here the work
// starts and the next packet is read at once; how many wait unacknowledged
// is bounded by the broker, told our MQTT 5 Receive Maximum (ackWindow).
//
// How: handleMessage is MQTT.js's documented hook, called with the PUBLISH
// and a callback that sends the PUBACK; called with an error, the callback
// sends none and MQTT.js goes on to the next packet. The PUBACK is then
// written after the work, on the connection the message came on (a new
// connection gets the message again from the broker instead).
import type { IPublishPacket, MqttClient } from 'mqtt';
import { generate as generatePacket } from 'mqtt-packet';

/** Default of the broker's window: at most this many messages unacknowledged at once. */
export const ACK_WINDOW = 1_000;

/** Given to MQTT.js's callback: no PUBACK now, this pipeline sends it later. */
class AcknowledgedLater extends Error {
  constructor() {
    super('acknowledged once its work is done');
  }
}

export class AckPipeline {
  /** The works not done yet (stop waits for their PUBACKs). */
  readonly #working = new Set<Promise<void>>();

  constructor(
    private readonly client: MqttClient,
    work: (topic: string, payload: Buffer) => Promise<void>,
  ) {
    client.handleMessage = (packet, callback) => {
      if (packet.qos !== 1 || packet.messageId === undefined) {
        callback();
        return;
      }
      this.#start(packet, work);
      callback(new AcknowledgedLater());
    };
  }

  /** Resolves once every message taken so far is worked on and acknowledged (or its connection is gone). */
  async settled(): Promise<void> {
    while (this.#working.size > 0) await Promise.all(this.#working);
  }

  #start(packet: IPublishPacket, work: (topic: string, payload: Buffer) => Promise<void>): void {
    const { stream } = this.client;
    const messageId = packet.messageId as number;
    const payload = typeof packet.payload === 'string' ? Buffer.from(packet.payload) : packet.payload;
    // A work that fails is acknowledged as well (beforeAck must not reject; were it to, a redelivery would fail again).
    const done = work(packet.topic, payload)
      .catch(() => undefined)
      .then(() => {
        this.#working.delete(done);
        // Another connection would not know this message id: the broker sends the message again there.
        if (this.client.stream !== stream || stream.destroyed || !this.client.connected) return;
        stream.write(
          generatePacket(
            { cmd: 'puback', messageId, reasonCode: 0 },
            { protocolVersion: this.client.options.protocolVersion ?? 4 },
          ),
        );
      });
    this.#working.add(done);
  }
}
