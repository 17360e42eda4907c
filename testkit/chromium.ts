// How the browser tests and `npm run screenshots` start Debian's chromium
// (playwright-core drives it; no browser is downloaded). Data only: each
// caller hands it to playwright's `chromium.launch`. This machine has no
// outside network, so everything chromium would fetch by itself is off.
import { accessSync, constants } from 'node:fs';

export const CHROMIUM_PATH = '/usr/bin/chromium';

/** Whether Debian's chromium is installed (`apt-get install chromium`). */
export function chromiumInstalled(path = CHROMIUM_PATH): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** chromium's flags: no background fetches, no first-run UI; no sandbox when run as root (CI containers). */
export function chromiumArgs(runningAsRoot = process.getuid?.() === 0): string[] {
  return [
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-default-apps',
    '--disable-domain-reliability',
    '--disable-sync',
    '--disable-breakpad',
    '--metrics-recording-only',
    '--no-first-run',
    '--no-default-browser-check',
    '--no-pings',
    '--safebrowsing-disable-auto-update',
    '--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication',
    '--disable-dev-shm-usage',
    ...(runningAsRoot ? ['--no-sandbox'] : []),
  ];
}
