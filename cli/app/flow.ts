// What the phone app does, step by step, printing each step: log
// in (or register), create a parking session, open the entrance box with the
// smart key, upload the box log, pay in the sandbox, open the exit box,
// upload again. Each step checks that the API and the box did what they
// should; the first that did not ends the run with its reason.
import {
  isAccessKind,
  parseCommandHeader,
  parseResponse,
  renderCommand,
  renderResponse,
  statusName,
} from '../../firmware-protocol/index.js';
import type { BoxLogInput } from '../../api/box-logs/types.js';
import type { BoxChannel } from './box-channel.js';
import { type ApiClient, StepFailure } from './http.js';
import { messageOf } from '../../lib/message-of.js';

export interface AppOptions {
  readonly client: { readonly client_app_id: string; readonly client_secret: string };
  readonly driver: { readonly email: string; readonly password: string };
  readonly register?: { readonly first_name: string; readonly last_name: string; readonly phone: string };
  readonly parkingId: number;
  readonly entranceBox?: number;
  readonly exitBox?: number;
  readonly pay: boolean;
  /** Keep the box logs instead of uploading them (the phone is offline). */
  readonly offline: boolean;
  readonly answerMs: number;
}

export interface AppResult {
  readonly steps: number;
  /** Box logs kept for a later upload (with --offline). */
  readonly kept: BoxLogInput[];
}

interface SessionBody {
  pay_url: string;
  amount: string;
  currency: string;
  parking_session: {
    id: number;
    state: string;
    payment_state: string;
    entrance_remaining_tries: number;
    exit_remaining_tries: number;
  };
  smart_key: { id: number; access_command: string; access_points: { access_point: { module_id: number } }[] };
}

type Say = (line: string) => void;

export async function runApp(api: ApiClient, boxes: BoxChannel, options: AppOptions, say: Say): Promise<AppResult> {
  let steps = 0;
  const step = async <T>(name: string, work: () => Promise<[T, string]>): Promise<T> => {
    try {
      const [value, detail] = await work();
      steps++;
      say(`✔ ${name}: ${detail}`);
      return value;
    } catch (error) {
      throw new StepFailure(`${name}: ${messageOf(error)}`);
    }
  };

  if (options.register !== undefined) {
    const register = options.register;
    await step('register', async () => {
      const user = await api.expect<{ id: number; email: string }>(201, 'POST', '/api/car_driver', {
        json: {
          api_car_driver_fo_user: {
            email: options.driver.email,
            password: options.driver.password,
            password_confirmation: options.driver.password,
            ...register,
          },
          ...options.client,
        },
      });
      return [user, `driver ${user.id} <${user.email}>`];
    });
  }
  const token = await step('log in', async () => {
    const body = await api.expect<{ access_token: string; expires_in: number }>(200, 'POST', '/api/oauth/token', {
      json: {
        grant_type: 'password',
        username: options.driver.email,
        password: options.driver.password,
        ...options.client,
      },
    });
    return [body.access_token, `access token for ${body.expires_in} s`];
  });
  const me = await api.expect<{ id: number }>(200, 'GET', '/api/car_driver/me', { token });

  const session = await step('start a parking session', async () => {
    const created = await api.request<SessionBody>('POST', '/api/car_driver/parking_sessions', {
      token,
      json: { parking_session: { secured_parking_id: options.parkingId } },
    });
    if (created.status === 201) {
      const body = created.body;
      return [
        body,
        `session ${body.parking_session.id}, ${body.amount} ${body.currency} to pay, smart key ${body.smart_key.id}`,
      ];
    }
    // The driver may have an open session from an earlier run: carry on with it.
    if (created.status === 422 && created.text.includes('open session')) {
      const current = await api.expect<SessionBody>(200, 'GET', '/api/car_driver/parking_sessions/current', { token });
      return [
        current,
        `session ${current.parking_session.id} already open (${current.parking_session.state}); carrying on with it`,
      ];
    }
    throw new StepFailure(`expected 201, got ${created.status} ${created.text.slice(0, 200)}`);
  });
  const points = session.smart_key.access_points.map((point) => point.access_point.module_id);
  const entrance = options.entranceBox ?? points[0];
  const exit = options.exitBox ?? points.at(-1);
  if (entrance === undefined || exit === undefined) throw new StepFailure('the smart key has no access points');
  const kept: BoxLogInput[] = [];

  const passBox = async (
    label: string,
    moduleId: number,
    expectedState: (state: string | undefined) => boolean,
    stateText: string,
  ): Promise<void> => {
    const log = await step(`${label}: send the smart key to box ${moduleId}`, async () => {
      const answer = await boxes.send(
        moduleId,
        session.smart_key.access_command,
        { fo_user_id: me.id, smart_key_id: session.smart_key.id },
        options.answerMs,
      );
      const response = Buffer.from(answer.response ?? '', 'base64');
      const fields = parseResponse(response);
      if (fields.status !== 0)
        throw new StepFailure(
          `the box refused: ${statusName(fields.status) ?? fields.status} (${renderResponse(response)})`,
        );
      return [
        boxLog(me.id, session, moduleId, answer.command, response, label === 'exit' ? 'out' : 'in', options.offline),
        renderResponse(response),
      ];
    });
    if (options.offline) {
      kept.push(log);
      say(`  offline: box log kept for later (${kept.length} kept)`);
    } else {
      await step(`${label}: upload the box log`, async () => {
        const body = await api.expect<{ box_logs: { id: number; verified: boolean; duplicate: boolean }[] }>(
          201,
          'POST',
          '/api/box_logs',
          { token, json: { box_logs: [{ box_log: log }] } },
        );
        const stored = body.box_logs[0];
        if (stored?.verified !== true) throw new StepFailure('the API did not verify the response');
        return [
          stored,
          `box log ${stored.id}, verified${stored.duplicate ? ' (the gateway or box had already delivered it: stored once)' : ''}`,
        ];
      });
    }
    await step(`${label}: check the session`, async () => {
      const current = await api.request<SessionBody>('GET', '/api/car_driver/parking_sessions/current', { token });
      const state =
        current.status === 200 ? current.body.parking_session.state : current.status === 404 ? 'finished' : undefined;
      if (!expectedState(state))
        throw new StepFailure(`expected ${stateText}, the session is ${state ?? `unknown (${current.status})`}`);
      return [state, `session ${String(state)}`];
    });
  };

  await passBox('entrance', entrance, (state) => state === 'active', 'active');
  if (options.pay) {
    await step('pay in the sandbox', async () => {
      const page = await api.request<string>('GET', session.pay_url);
      if (page.status !== 200 || !page.text.includes('<form'))
        throw new StepFailure(`the payment page answered ${page.status} without a form`);
      await api.request<string>('POST', session.pay_url, {
        form: { action: 'pay', card_number: '4242424242424242', expiry: expiryNextYear() },
      });
      const current = await api.expect<SessionBody>(200, 'GET', '/api/car_driver/parking_sessions/current', { token });
      if (current.parking_session.payment_state !== 'paid')
        throw new StepFailure(`payment_state is ${current.parking_session.payment_state}`);
      return [current, `${session.amount} ${session.currency} paid with the test card`];
    });
  }
  await passBox('exit', exit, (state) => state === 'exiting' || state === 'finished', 'exiting or finished');
  return { steps, kept };
}

/** The box log of an exchange, as spec 2.1 has the app send it. */
function boxLog(
  userId: number,
  session: SessionBody,
  moduleId: number,
  command: string,
  response: Buffer,
  type: 'in' | 'out',
  offline: boolean,
): BoxLogInput {
  const commandBytes = Buffer.from(command, 'base64');
  const header = parseCommandHeader(commandBytes);
  // ACCESS (sealed parking) or ACCESS_SIGNED (signed parking, the default).
  if (!header.ok || !isAccessKind(header.header.kind))
    throw new StepFailure('the smart key holds no access command (ACCESS or ACCESS_SIGNED)');
  return {
    fo_user_id: userId,
    smart_key_id: session.smart_key.id,
    equipment_id: moduleId,
    secured_parking_id: header.header.scope,
    type,
    command,
    // The phone holds no key: a sealed ACCESS renders its header only, an
    // ACCESS_SIGNED its clear body (its signature unchecked here).
    command_decrypted: renderCommand(commandBytes),
    response: response.toString('base64'),
    response_decrypted: renderResponse(response),
    offline,
    created_at: new Date().toISOString().slice(0, 19).replace('T', ' '),
    point_attributes: null,
  };
}

function expiryNextYear(): string {
  const now = new Date();
  return `${String(now.getUTCMonth() + 1).padStart(2, '0')}/${String((now.getUTCFullYear() + 1) % 100).padStart(2, '0')}`;
}
