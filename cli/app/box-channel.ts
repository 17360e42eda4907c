// How the phone's stand-in reaches a box on the bench: the access command as
// a command message on the box's MQTT topic (a simulated box answers there,
// a real one through the gateway), and its response message back, matched by
// a request_id of its own.
import { randomUUID } from 'node:crypto';
import mqtt, { type MqttClient } from 'mqtt';
import { isBase64, type ResponseMessage } from '../../lib/mqtt-messages.js';
import type { Topics } from '../../lib/mqtt-topics.js';
import { disableNagle } from '../../lib/resilient-mqtt.js';
import { StepFailure } from './http.js';
import { messageOf } from '../../lib/message-of.js';

/** A broker's refusal of the login (CONNACK 4 or 5, MQTT 3.1.1 and 5 alike). */
const LOGIN_REFUSED = /bad username or password|not authorized/i;
const OPERATOR_ACCOUNT_HINT =
  '--mqtt-username and --mqtt-password take an operator account of that broker: `parkbench start` prints one (op-demo-app, a new password each start), `parkbench admin demo` another (op-demo-tools, a new password each run), `parkbench admin mqtt-client add --name NAME --role operator` makes one';

export class BoxChannel {
  private constructor(
    private readonly client: MqttClient,
    private readonly topics: Topics,
  ) {}

  static async connect(
    url: string,
    username: string | undefined,
    password: string | undefined,
    topics: Topics,
  ): Promise<BoxChannel> {
    try {
      const client = await mqtt.connectAsync(url, {
        reconnectPeriod: 0,
        connectTimeout: 10_000,
        ...(username === undefined ? {} : { username }),
        ...(password === undefined ? {} : { password }),
      });
      disableNagle(client);
      await client.subscribeAsync(topics.allBoxes('response'), { qos: 1 });
      return new BoxChannel(client, topics);
    } catch (error) {
      const message = messageOf(error);
      const hint = LOGIN_REFUSED.test(message) ? `; ${OPERATOR_ACCOUNT_HINT}` : '';
      throw new StepFailure(`cannot reach the boxes on ${url}: ${message}${hint}`);
    }
  }

  /** Sends a command to a box and waits for its response message. */
  send(
    moduleId: number,
    command: string,
    context: { fo_user_id: number; smart_key_id: number },
    timeoutMs: number,
  ): Promise<ResponseMessage> {
    const requestId = randomUUID();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.client.off('message', onMessage);
        reject(
          new StepFailure(
            `box ${moduleId} did not answer within ${timeoutMs} ms (is it running, and reachable on this broker?)`,
          ),
        );
      }, timeoutMs);
      const onMessage = (topic: string, payload: Buffer): void => {
        if (this.topics.parseBoxTopic(topic)?.moduleId !== moduleId) return;
        let message: ResponseMessage;
        try {
          message = JSON.parse(payload.toString('utf8')) as ResponseMessage;
        } catch {
          return;
        }
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- any client on the bus may publish here: the JSON is not checked against the type, a message without a context is someone else's
        if (message.context?.request_id !== requestId) return;
        clearTimeout(timer);
        this.client.off('message', onMessage);
        if (message.response === null || !isBase64(message.response))
          reject(new StepFailure(`box ${moduleId} gave no response (${message.error ?? 'none'})`));
        else resolve(message);
      };
      this.client.on('message', onMessage);
      this.client.publish(
        this.topics.box(moduleId, 'command'),
        JSON.stringify({ command, context: { ...context, request_id: requestId } }),
        { qos: 1 },
        (error) => {
          if (!error) return;
          clearTimeout(timer);
          this.client.off('message', onMessage);
          reject(new StepFailure(`cannot publish to box ${moduleId}: ${error.message}`));
        },
      );
    });
  }

  async close(): Promise<void> {
    await this.client.endAsync(true);
  }
}
