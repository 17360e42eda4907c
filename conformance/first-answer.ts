// Before the cases: the box's first answer. A box started a moment before
// the suite (a script that backgrounds `parkbench sim`) may not listen yet,
// so the suite asks (BATTERY_QUERY) until an answer comes or --wait-ms has
// passed. A REPLAY tells that the box accepted the suite's sequence or a
// later one (an earlier run, the service; docs/protocol.md, step 6): the
// suite moves past it, as the service does, and asks again.
import { sleep } from '../lib/clock.js';
import { MAX_REPLAYS } from '../lib/control-sequence-skip.js';
import { parseResponse, Status, verifyResponse, type ParsedResponse } from '../firmware-protocol/index.js';
import { batteryQuery } from './box-under-test.js';
import { untilInterrupted } from './interrupted.js';
import type { SuiteContext } from './suite-context.js';

/** Between two tries on a link that is down (a port not opened yet), ms. */
const LINK_DOWN_PAUSE_MS = 200;

/** The suite could not begin: no case ran, nothing on the box changed. */
export class SuiteNotStarted extends Error {
  override readonly name = 'SuiteNotStarted';
}

/** Resolves once the box answers anything but a REPLAY the suite can move
 * past; rejects with SuiteNotStarted when no answer came within `waitMs`,
 * or the box kept answering REPLAY (SuiteInterrupted when interrupted). */
export async function awaitFirstAnswer(context: SuiteContext, waitMs: number): Promise<void> {
  const { clock, target, box } = context;
  const deadline = clock.now() + waitMs;
  for (;;) {
    const left = deadline - clock.now();
    const command = batteryQuery(box, context.controlSeq());
    const exchange = await untilInterrupted(
      target.exchange(command, Math.max(1, Math.min(left, context.waitMs))),
      context.signal,
    );
    const answer = exchange.response === null ? null : verifiedAnswer(exchange.response, command, box.boxKey);
    if (answer === 'unverified') return; // the box answers: the cases say what is wrong with it
    if (answer !== null) {
      if (answer.status !== Status.REPLAY) {
        context.heard(answer);
        return;
      }
      if (context.skipPastReplay(answer.keyId) > MAX_REPLAYS)
        throw new SuiteNotStarted(
          `the box answered REPLAY up to control sequence ${answer.keyId}: it accepted a higher one elsewhere (parkbench conformance --control-seq starts above it)`,
        );
      continue;
    }
    if (clock.now() >= deadline)
      throw new SuiteNotStarted(`no answer within ${waitMs} ms: is the box running and on this link?`);
    if (exchange.error === 'link_down')
      await untilInterrupted(sleep(clock, Math.min(LINK_DOWN_PAUSE_MS, deadline - clock.now())), context.signal);
  }
}

function verifiedAnswer(response: Buffer, command: Buffer, boxKey: Uint8Array): ParsedResponse | 'unverified' {
  let fields: ParsedResponse;
  try {
    fields = parseResponse(response);
  } catch {
    return 'unverified';
  }
  return verifyResponse(response, boxKey, command) ? fields : 'unverified';
}
