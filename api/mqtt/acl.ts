// Who may publish and subscribe to what on the bench's broker
// (docs/architecture.md, Access). Pure rules over the topic layout: the embedded
// broker asks them on every publish and subscribe, and the mosquitto export
// writes the same rules as an ACL file.
import type { Topics } from '../../lib/mqtt-topics.js';

export type MqttRole = 'box' | 'gateway' | 'operator' | 'api';

export type MqttAccount =
  | { readonly role: 'box'; readonly username: string; readonly moduleId: number }
  | { readonly role: 'gateway' | 'operator' | 'api'; readonly username: string };

export class MqttAcl {
  constructor(private readonly topics: Topics) {}

  canPublish(account: MqttAccount, topic: string): boolean {
    const box = this.topics.parseBoxTopic(topic);
    switch (account.role) {
      case 'box':
        // Its own response, state and availability (the last will included).
        return (
          box !== null &&
          box.moduleId === account.moduleId &&
          (box.name === 'response' || box.name === 'state' || box.name === 'availability')
        );
      case 'gateway':
        return (
          (box !== null && (box.name === 'response' || box.name === 'state' || box.name === 'availability')) ||
          topic === this.topics.gateway(account.username, 'state') ||
          topic === this.topics.gateway(account.username, 'availability')
        );
      case 'operator':
        return box !== null && (box.name === 'command' || box.name === 'sim/set');
      case 'api':
        // Commands, and an operator's sim/set through the operator API (POST /api/operator/boxes/:module_id/sim).
        return box !== null && (box.name === 'command' || box.name === 'sim/set');
    }
  }

  canSubscribe(account: MqttAccount, filter: string): boolean {
    const topic = withoutSharePrefix(filter);
    switch (account.role) {
      case 'box':
        return (
          topic === this.topics.box(account.moduleId, 'command') ||
          topic === this.topics.box(account.moduleId, 'sim/set')
        );
      case 'gateway':
        return topic === this.topics.allBoxes('command') || this.topics.parseBoxTopic(topic)?.name === 'command';
      case 'operator':
      case 'api':
        // Read everything (their own tools decide what to look at).
        return true;
    }
  }

  /** The same rules as a mosquitto ACL file, for an external broker. */
  mosquittoAcl(accounts: readonly MqttAccount[]): string {
    const p = this.topics.prefix;
    const lines = [
      '# parkbench MQTT access rules (docs/architecture.md "Access"), written by `parkbench admin mqtt-acl`.',
      '# Anything not granted here is refused.',
      '',
    ];
    for (const account of accounts) {
      lines.push(`user ${account.username}`);
      switch (account.role) {
        case 'box':
          lines.push(
            `topic read ${this.topics.box(account.moduleId, 'command')}`,
            `topic read ${this.topics.box(account.moduleId, 'sim/set')}`,
            `topic write ${this.topics.box(account.moduleId, 'response')}`,
            `topic write ${this.topics.box(account.moduleId, 'state')}`,
            `topic write ${this.topics.box(account.moduleId, 'availability')}`,
          );
          break;
        case 'gateway':
          lines.push(
            `topic read ${p}/boxes/+/command`,
            `topic write ${p}/boxes/+/response`,
            `topic write ${p}/boxes/+/state`,
            `topic write ${p}/boxes/+/availability`,
            `topic write ${this.topics.gateway(account.username, 'state')}`,
            `topic write ${this.topics.gateway(account.username, 'availability')}`,
          );
          break;
        case 'operator':
          lines.push('topic read #', `topic write ${p}/boxes/+/command`, `topic write ${p}/boxes/+/sim/set`);
          break;
        case 'api':
          lines.push('topic read #', `topic write ${p}/boxes/+/command`, `topic write ${p}/boxes/+/sim/set`);
          break;
      }
      lines.push('');
    }
    return lines.join('\n');
  }
}

/** `$share/<group>/<filter>` subscribes to <filter> (MQTT 5, 4.8.2). */
function withoutSharePrefix(filter: string): string {
  const match = /^\$share\/[^/#+]+\/(.+)$/.exec(filter);
  return match?.[1] ?? filter;
}
