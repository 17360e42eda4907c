// aedes's in-memory persistence answers every subscription by scanning all
// retained messages (aedes-persistence asyncPersistence.js,
// retainedMessagesByPattern): with a retained state and availability per
// box, 5,000 boxes subscribing to their own topics cost 5,000 × 10,000 topic
// matches, and a fleet took minutes to connect. Boxes subscribe to exact
// topics, so this persistence keeps an exact index of retained messages
// beside aedes's own and answers wildcard-free patterns from it; anything
// with a wildcard goes to aedes's scan as before.
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';

interface RetainedPacket {
  readonly topic: string;
  readonly payload: Buffer;
}

interface AsyncPersistenceClass {
  new (options?: object): {
    storeRetained(packet: RetainedPacket): Promise<void>;
    createRetainedStream(pattern: string): Iterable<RetainedPacket> | AsyncIterable<RetainedPacket>;
    createRetainedStreamCombi(patterns: string[]): Iterable<RetainedPacket> | AsyncIterable<RetainedPacket>;
  };
}

type Persistence = object & {
  setup(broker: unknown): Promise<void>;
  createRetainedStreamCombi(patterns: string[]): Readable;
};

const require = createRequire(import.meta.url);
const AsyncPersistence = require('aedes-persistence/asyncPersistence.js') as AsyncPersistenceClass;
const { CallBackPersistence } = require('aedes-persistence/callBackPersistence.js') as {
  CallBackPersistence: new (
    factory: (options: object) => InstanceType<AsyncPersistenceClass>,
    options?: object,
  ) => Persistence;
};

const hasWildcard = (pattern: string): boolean => pattern.includes('+') || pattern.includes('#');

class IndexedRetainedPersistence extends AsyncPersistence {
  readonly #exact = new Map<string, RetainedPacket>();

  override async storeRetained(packet: RetainedPacket): Promise<void> {
    // An empty payload clears the retained message (MQTT-3.3.1-10).
    if (packet.payload.length === 0) this.#exact.delete(packet.topic);
    else this.#exact.set(packet.topic, { ...packet });
    await super.storeRetained(packet);
  }

  override createRetainedStream(pattern: string): Iterable<RetainedPacket> | AsyncIterable<RetainedPacket> {
    return hasWildcard(pattern) ? super.createRetainedStream(pattern) : this.#exactMatches([pattern]);
  }

  override createRetainedStreamCombi(patterns: string[]): Iterable<RetainedPacket> | AsyncIterable<RetainedPacket> {
    return patterns.some(hasWildcard) ? super.createRetainedStreamCombi(patterns) : this.#exactMatches(patterns);
  }

  *#exactMatches(patterns: string[]): Iterable<RetainedPacket> {
    for (const pattern of new Set(patterns)) {
      const packet = this.#exact.get(pattern);
      if (packet !== undefined) yield packet;
    }
  }
}

/** aedes's memory persistence with an exact index of retained messages. */
export function indexedRetainedPersistence(): Persistence {
  return new CallBackPersistence((options) => new IndexedRetainedPersistence(options));
}
