// The MQTT topics of the bench (docs/architecture.md, MQTT topics), built in one
// place so the API, the simulator and the gateway cannot drift apart.

export const DEFAULT_TOPIC_PREFIX = 'parkbench';

export type BoxTopicName = 'command' | 'response' | 'state' | 'availability' | 'sim/set';

export class Topics {
  constructor(readonly prefix: string = DEFAULT_TOPIC_PREFIX) {
    if (prefix === '' || /[#+]/.test(prefix) || prefix.startsWith('/') || prefix.endsWith('/')) {
      throw new RangeError(
        `topic prefix must be non-empty, without wildcards or leading/trailing slashes, got "${prefix}"`,
      );
    }
  }

  /** `{prefix}/boxes/{module_id}/{name}` */
  box(moduleId: number, name: BoxTopicName): string {
    return `${this.prefix}/boxes/${moduleId}/${name}`;
  }

  /** The same topic for every box: `{prefix}/boxes/+/{name}`. */
  allBoxes(name: BoxTopicName): string {
    return `${this.prefix}/boxes/+/${name}`;
  }

  /** `{prefix}/gateways/{gateway_id}/{name}` */
  gateway(gatewayId: string, name: 'state' | 'availability'): string {
    return `${this.prefix}/gateways/${gatewayId}/${name}`;
  }

  /** The same topic for every gateway: `{prefix}/gateways/+/{name}`. */
  allGateways(name: 'state' | 'availability'): string {
    return `${this.prefix}/gateways/+/${name}`;
  }

  /** The gateway id and topic name of a gateway topic, or null for any other topic. */
  parseGatewayTopic(topic: string): { gatewayId: string; name: 'state' | 'availability' } | null {
    const head = `${this.prefix}/gateways/`;
    if (!topic.startsWith(head)) return null;
    const [gatewayId, name, ...rest] = topic.slice(head.length).split('/');
    if (gatewayId === undefined || gatewayId === '' || rest.length > 0 || (name !== 'state' && name !== 'availability'))
      return null;
    return { gatewayId, name };
  }

  /** The module id and topic name of a box topic, or null for any other topic. */
  parseBoxTopic(topic: string): { moduleId: number; name: BoxTopicName } | null {
    const head = `${this.prefix}/boxes/`;
    if (!topic.startsWith(head)) return null;
    const rest = topic.slice(head.length);
    const slash = rest.indexOf('/');
    if (slash <= 0) return null;
    const id = rest.slice(0, slash);
    const name = rest.slice(slash + 1);
    // Canonical decimal only (no sign, no leading zero): `09101` is no name
    // of box 9101, or one box would have many topics and ACLs.
    if (!/^(?:0|[1-9]\d{0,9})$/.test(id) || !isBoxTopicName(name)) return null;
    const moduleId = Number(id);
    return moduleId <= 0xffffffff ? { moduleId, name } : null;
  }
}

function isBoxTopicName(name: string): name is BoxTopicName {
  return name === 'command' || name === 'response' || name === 'state' || name === 'availability' || name === 'sim/set';
}
