// Garbage on the link must not stop the box from answering the next command
// (docs/protocol.md, Serial link framing: bad frames are dropped and counted;
// BLE link: a chunk out of order drops the partial frame; docs/architecture.md, MQTT topics: a
// command message that is no command is dropped without a response). The
// valid command is a sealed ACCESS where the box holds K_park, else an
// ACCESS_SIGNED by the suite's issuer (installed by then).
import { Status } from '../../firmware-protocol/index.js';
import { accessCommand, signedAccessCommand } from '../box-under-test.js';
import type { ConformanceCase } from './conformance-case.js';
import { KEY_TRIES, validKey } from './access-cases.js';

const garbageThenValid: ConformanceCase = {
  name: 'garbage on the link, then a valid ACCESS',
  step: 'serial link framing; BLE link; MQTT: docs/architecture.md',
  expected: '0x00',
  async run(run) {
    const now = await run.context.learnBoxTime(run);
    if (now === undefined) {
      run.fail('cannot learn the box clock: no verified response');
      return;
    }
    await run.context.target.sendGarbage();
    const key = validKey(run, now);
    const command =
      run.box.parkingKey === null
        ? signedAccessCommand(run.box, run.context.issuers.current.privateKey, key)
        : accessCommand(run.box, key);
    await run.send(command, { status: Status.OK, remaining: KEY_TRIES - 1 });
  },
};

export const linkCases: readonly ConformanceCase[] = [garbageThenValid];
