// A box log as the ingestion path takes it, whoever sends it: the HTTP route
// (spec 2.1, validated by validate.ts) or MQTT ingestion.

import type { BoxLogSource } from '../events/types.js';

export type { BoxLogSource };
export type BoxLogType = 'in' | 'out' | 'control';

export interface PointAttributes {
  latitude: number;
  longitude: number;
}

/** Spec 2.1, field for field. Strings are stored as sent. */
export interface BoxLogInput {
  /** The driver; null only from MQTT (a control command has no driver). */
  fo_user_id: number | null;
  /** null for control commands and keys that are no smart key of the service. */
  smart_key_id: number | null;
  /** The box's module id. */
  equipment_id: number;
  secured_parking_id: number;
  type: BoxLogType;
  /** Base64 of the command frame. */
  command: string | null;
  command_decrypted: string | null;
  /** Base64 of the response frame; null when the box did not answer. */
  response: string | null;
  response_decrypted: string | null;
  offline: boolean;
  /** `YYYY-MM-DD HH:MM:SS`, UTC. */
  created_at: string;
  point_attributes: PointAttributes | null;
  /** MQTT ingestion only: the SHA-256 (hex) of the message's box and payload,
   * which stores an unverified log once however often the broker delivers it. */
  mqtt_message_digest?: string;
}

/** One element of the 201 body, in request order (a type, not an
 * interface, so that it fits the response schema's open object type). */
export type BoxLogResult = {
  id: number;
  verified: boolean;
  /** A verified response (or, over MQTT, a message) already stored: nothing new was stored, `id` is the stored log's. */
  duplicate: boolean;
};

export interface IngestOptions {
  source: BoxLogSource;
  /** HTTP: the token's user; every fo_user_id must be this user (else 422). */
  userId?: number;
  /** When the logs arrived, ms since the epoch (default: the clock's now). */
  receivedAt?: number;
}
