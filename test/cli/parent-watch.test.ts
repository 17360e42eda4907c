// The parent watch of long-running commands (cli/parent-watch.ts) on the
// fake clock: the parent pid is read every PARENT_POLL_MS; a change ends the
// watch, an unchanged one keeps it reading, and stop() cancels the read.
import test from 'ava';
import { PARENT_POLL_MS, watchParent } from '../../cli/parent-watch.js';
import { FakeClock } from '../../lib/fake-clock.js';

test('a parent pid that changes (the parent gone, this process handed to init) ends the watch at the next read', async (t) => {
  const clock = new FakeClock();
  let parent = 4242;
  const watch = watchParent({ clock, parentPid: () => parent });
  let gone = false;
  void watch.gone.then(() => (gone = true));
  clock.advance(PARENT_POLL_MS * 3);
  await Promise.resolve();
  t.false(gone);
  t.is(clock.pendingTimers, 1, 'still reading');
  parent = 1;
  clock.advance(PARENT_POLL_MS);
  await watch.gone;
  t.true(gone);
  t.is(clock.pendingTimers, 0, 'no read after the parent has gone');
});

test('stop() cancels the pending read, so a stopping command is not held by it', (t) => {
  const clock = new FakeClock();
  const watch = watchParent({ clock, parentPid: () => 4242 });
  t.is(clock.pendingTimers, 1);
  watch.stop();
  t.is(clock.pendingTimers, 0);
});
