// True availability of a box: its own retained availability AND,
// when it is reached through a gateway, the gateway's. A gateway's last will
// covers only the gateway's own availability topic, so when a gateway dies
// the retained `online` it published for its boxes goes stale; here a box
// behind an offline gateway is offline, with the reason.
//
// Which gateway reaches a box: the retained state of the gateway
// (`{prefix}/gateways/{id}/state`, its `boxes: [{module_id, via}]`,
// gateway/gateway.ts snapshot). The gateway whose state listed the box last
// is its gateway; a state that no longer lists it lets it go.
// Pure: messages in, derived values out (through `onChange`); time from the
// injected clock ("since" is when this process learned it).
import type { Clock } from '../../lib/clock.js';

export type AvailabilityValue = 'online' | 'offline' | 'unknown';

/** What the API believes about a box, and why. */
export interface DerivedAvailability {
  readonly availability: AvailabilityValue;
  /** Why it is offline (the box said so, or its gateway is offline); null when online or unknown. */
  readonly reason: string | null;
  /** Since when (ms) this process has held the fact the value rests on; null when unknown. */
  readonly since: number | null;
  /** The gateway the box is reached through, null for a box on MQTT itself (or not known). */
  readonly gatewayId: string | null;
}

/** `news`: the box's own availability message arrived (an `online` one wakes
 * the control dispatcher even when the derived value did not change). */
export type DerivedListener = (moduleId: number, derived: DerivedAvailability, news: boolean) => void;

interface Stamped {
  readonly online: boolean;
  readonly at: number;
  /** Why the box counts as offline when no message of its own said so. */
  readonly reason?: string;
}

const UNKNOWN: DerivedAvailability = { availability: 'unknown', reason: null, since: null, gatewayId: null };

export class BoxAvailability {
  readonly #boxes = new Map<number, Stamped>();
  readonly #gateways = new Map<string, Stamped>();
  /** module id → the gateway whose state listed it last. */
  readonly #gatewayOf = new Map<number, string>();
  /** gateway id → the module ids its last state listed. */
  readonly #reachedBy = new Map<string, Set<number>>();
  readonly #derived = new Map<number, DerivedAvailability>();

  constructor(
    private readonly clock: Clock,
    private readonly onChange: DerivedListener,
  ) {}

  /** The derived availability of one box. */
  of(moduleId: number): DerivedAvailability {
    return this.#derived.get(moduleId) ?? UNKNOWN;
  }

  /** A box's own availability message (`{prefix}/boxes/{id}/availability`). */
  box(moduleId: number, online: boolean): void {
    // A repeat keeps its first "since" (and the reason it was offline for).
    if (this.#boxes.get(moduleId)?.online !== online) this.#boxes.set(moduleId, { online, at: this.clock.now() });
    this.#update(moduleId, true);
  }

  /** A gateway's availability message (its last will says offline).
   * Returns the boxes it takes offline with it (none for a repeat or `online`). */
  gateway(gatewayId: string, online: boolean): number[] {
    const known = this.#gateways.get(gatewayId);
    if (known?.online === online) return []; // a repeat keeps its first "since"
    const at = this.clock.now();
    this.#gateways.set(gatewayId, { online, at });
    if (!online) {
      // The last will stands for what a gateway stopping cleanly publishes
      // (gateway.ts stop): its boxes offline. So the box's stale `online`
      // does not come back with the gateway: the gateway says `online` for
      // the box again once it reaches it.
      for (const moduleId of this.#reachedBy.get(gatewayId) ?? []) {
        this.#boxes.set(moduleId, {
          online: false,
          at,
          reason: `gateway ${gatewayId} went offline at ${new Date(at).toISOString()} and has not reached it since`,
        });
      }
    }
    const boxes = [...(this.#reachedBy.get(gatewayId) ?? [])];
    for (const moduleId of boxes) this.#update(moduleId, false);
    return online ? [] : boxes;
  }

  /** A gateway's state message: the boxes it reaches now. */
  gatewayBoxes(gatewayId: string, moduleIds: readonly number[]): void {
    const previous = this.#reachedBy.get(gatewayId) ?? new Set<number>();
    const now = new Set(moduleIds);
    this.#reachedBy.set(gatewayId, now);
    for (const moduleId of now) {
      const other = this.#gatewayOf.get(moduleId);
      if (other !== undefined && other !== gatewayId) this.#reachedBy.get(other)?.delete(moduleId);
      this.#gatewayOf.set(moduleId, gatewayId);
      this.#update(moduleId, false);
    }
    for (const moduleId of previous) {
      if (now.has(moduleId) || this.#gatewayOf.get(moduleId) !== gatewayId) continue;
      this.#gatewayOf.delete(moduleId);
      this.#update(moduleId, false);
    }
  }

  #update(moduleId: number, news: boolean): void {
    const derived = this.#derive(moduleId);
    const before = this.#derived.get(moduleId) ?? UNKNOWN;
    this.#derived.set(moduleId, derived);
    const changed =
      before.availability !== derived.availability ||
      before.reason !== derived.reason ||
      before.gatewayId !== derived.gatewayId;
    if (changed || news) this.onChange(moduleId, derived, news);
  }

  #derive(moduleId: number): DerivedAvailability {
    const own = this.#boxes.get(moduleId);
    const gatewayId = this.#gatewayOf.get(moduleId) ?? null;
    const gateway = gatewayId === null ? undefined : this.#gateways.get(gatewayId);
    if (gatewayId !== null && gateway?.online === false) {
      return {
        availability: 'offline',
        reason: `gateway ${gatewayId} offline since ${new Date(gateway.at).toISOString()}`,
        since: gateway.at,
        gatewayId,
      };
    }
    if (own === undefined) return { ...UNKNOWN, gatewayId };
    if (!own.online) {
      const reason =
        own.reason ??
        `${gatewayId === null ? 'the box' : `gateway ${gatewayId}`} reported it offline at ${new Date(own.at).toISOString()}`;
      return { availability: 'offline', reason, since: own.at, gatewayId };
    }
    return { availability: 'online', reason: null, since: own.at, gatewayId };
  }
}

/** The module ids of a gateway's state message (gateway/gateway.ts snapshot), or null if it is none. */
export function boxesOfGatewayState(payload: Buffer | string): number[] | null {
  let state: unknown;
  try {
    state = JSON.parse(payload.toString());
  } catch {
    return null;
  }
  if (typeof state !== 'object' || state === null || !('boxes' in state) || !Array.isArray(state.boxes)) return null;
  const ids: number[] = [];
  for (const box of state.boxes as unknown[]) {
    if (typeof box !== 'object' || box === null || !('module_id' in box)) continue;
    const id = box.module_id;
    if (typeof id === 'number' && Number.isInteger(id) && id >= 0 && id <= 0xffffffff) ids.push(id);
  }
  return ids;
}
