// Why a bench did not start, in one sentence for whoever started it, with
// the setting it is about, so that each caller names that setting its own
// way: `parkbench start` a flag and an exit code, `parkbench/testing` an
// option of startBench.

/** The setting a failure is about: the database (it cannot be opened, or
 * parkbench must not use it), the HTTP port or the embedded broker's port
 * (taken, or privileged), the external broker (it refused or was not
 * reached), the access mode (the demo parking has the other one). */
export type BenchSetting = 'database' | 'port' | 'mqttPort' | 'mqttUrl' | 'accessMode';

export class BenchStartError extends Error {
  override readonly name = 'BenchStartError';

  constructor(
    message: string,
    /** Undefined when no setting is at fault (a failure of the machine or of parkbench). */
    readonly setting: BenchSetting | undefined,
    /** True when the bench cannot start until a setting changes (a database
     * parkbench must not use, a broker without the bench's accounts, demo
     * data of another access mode), where starting again may do for the
     * others: `parkbench start` exits 2 for these, 1 for the others. */
    readonly settingsMustChange: boolean,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}
