// One `parkbench start` (bench-process.ts) and one chromium (browser.ts)
// shared by the tests of a bench page test file: `const running =
// benchAndBrowserForFile(test)` starts both in `test.before` and stops them
// in `test.after.always` (also when a test failed); inside a test,
// `running()` gives them. A file that adds to the bench before its tests
// (an admin command, a driver's session) passes `prepare`: it runs once the
// bench is ready, before the browser starts (ava runs a file's before hooks
// at once, so a hook of the file's own could not wait for this one).
// Without /usr/bin/chromium nothing starts: the file's tests are declared
// with `testNeeding('chromium', test.serial)` (requires.ts) and skipped, so
// they never call `running()`.
import type { TestFn } from 'ava';
import type { Browser } from 'playwright-core';
import { chromiumInstalled } from '../../testkit/chromium.js';
import { startBenchProcess, type BenchProcess } from './bench-process.js';
import { launchBrowser } from './browser.js';

export interface BenchAndBrowser {
  bench: BenchProcess;
  browser: Browser;
}

/** Starts the bench and the browser for this test file; returns their getter, to call inside a test. */
export function benchAndBrowserForFile(
  test: TestFn,
  prepare: (bench: BenchProcess) => Promise<void> = async () => {},
): () => BenchAndBrowser {
  let bench: BenchProcess | undefined;
  let browser: Browser | undefined;
  test.before(async () => {
    if (!chromiumInstalled()) return;
    bench = await startBenchProcess();
    await prepare(bench);
    browser = await launchBrowser();
  });
  test.after.always(async () => {
    await browser?.close();
    await bench?.stop();
  });
  return () => {
    if (bench === undefined || browser === undefined) throw new Error('the bench or the browser did not start');
    return { bench, browser };
  };
}
