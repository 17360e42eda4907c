// A pty pair (testkit/pty-pair.ts) for one test: closed when the test ends;
// and the test's end of such a cable, a serial port reading link frames.
// Declare the tests that use it with `testNeeding('socat', test)` (requires.ts).
import type { ExecutionContext } from 'ava';
import { SerialPort } from 'serialport';
import { LinkFrameParser, type LinkFrame } from '../../lib/link-frame-stream.js';
import { startPtyPair, type PtyPair } from '../../testkit/pty-pair.js';

export async function ptyPairForTest(t: ExecutionContext): Promise<PtyPair> {
  const pair = await startPtyPair();
  t.teardown(() => pair.close());
  return pair;
}

/** The test's end of the cable: a real serial port on `path`, opened, closed when the test ends, and the frames it reads. */
export async function cableEnd(t: ExecutionContext, path: string): Promise<{ port: SerialPort; frames: LinkFrame[] }> {
  const port = new SerialPort({ path, baudRate: 115_200, autoOpen: false });
  await new Promise<void>((resolve, reject) => port.open((error) => (error ? reject(error) : resolve())));
  t.teardown(() => new Promise<void>((resolve) => (port.isOpen ? port.close(() => resolve()) : resolve())));
  const frames: LinkFrame[] = [];
  port.pipe(new LinkFrameParser()).on('data', (frame: LinkFrame) => frames.push(frame));
  return { port, frames };
}
