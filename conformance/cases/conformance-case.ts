// A case of the suite: a name, the docs/protocol.md step it checks, the status
// bytes it expects (as the table shows them), and what it does.
import type { CaseRun } from '../suite-context.js';

export interface ConformanceCase {
  readonly name: string;
  /** Where in docs/protocol.md the rule is, e.g. `checks, step 7` (step 7 of its checks). */
  readonly step: string;
  /** The exact status bytes expected, in order: `0x00, 0x00, 0x12`. */
  readonly expected: string;
  /** Moves a real barrier or spends tries many times: skipped with --skip-wearing. */
  readonly wearing?: boolean;
  /** A version 2 case: not run with --protocol 1. */
  readonly version2?: boolean;
  /** Seals an ACCESS under K_park: runs only on a box that holds one. */
  readonly needsParkingKey?: boolean;
  run(run: CaseRun): Promise<void>;
}
