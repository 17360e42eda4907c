// What the operator box tests share: the two box routes as an operator
// sends them, and the wait until a simulated box's link has subscribed.
import type { TestApp } from './api-app.js';
import type { SimulatedBox } from '../../simulator/simulated-box.js';

export function sendCommand(app: TestApp, token: string, moduleId: number | string, payload: unknown) {
  return app.app.inject({
    method: 'POST',
    url: `/api/operator/boxes/${moduleId}/commands`,
    headers: { authorization: `Bearer ${token}` },
    payload: payload as string,
  });
}

export function setSim(app: TestApp, token: string, moduleId: number | string, payload: unknown) {
  return app.app.inject({
    method: 'POST',
    url: `/api/operator/boxes/${moduleId}/sim`,
    headers: { authorization: `Bearer ${token}` },
    payload: payload as string,
  });
}

/** Until the box's link has subscribed (the link tells no one), a command is
 * lost: send BATTERY_QUERYs, each timed out on the fake clock, until the box
 * receives one. */
export async function untilSubscribed(app: TestApp, token: string, moduleId: number, box: SimulatedBox): Promise<void> {
  for (let attempt = 0; attempt < 50 && box.counters.commandsReceived === 0; attempt++) {
    const command = { settled: false };
    const sent = sendCommand(app, token, moduleId, { command: 'battery_query' }).finally(() => {
      command.settled = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Until it settles: on a loaded machine the command's timer may be set
    // on the fake clock after this wait, and one advance before it is lost.
    for (let step = 0; step < 100 && !command.settled; step++) {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the box counts while this awaits; narrowing does not know
      if (box.counters.commandsReceived === 0) app.clock.advance(app.config.boxAnswerTimeoutMs + 1);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await sent;
  }
  if (box.counters.commandsReceived === 0) throw new Error('the box never subscribed');
}
