// Where the suite's records go: the whole run's file (--capture) and the
// file of the case running (--capture-dir), behind one sink, so each link
// has one LinkCapture for the whole run. A case's file is opened as the
// case begins and closed as it ends; what crosses the link between cases
// (the first answer, status reports) goes to the whole run's file alone.
// A case that put nothing on the link (it skipped itself) leaves no file.
// A case file that cannot be opened or written stops the case files for the
// rest of the run, said once; the run, and the whole run's file, go on.
import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { CaptureFile } from '../../lib/capture/capture-file.js';
import type { CaptureRecord } from '../../lib/capture/record.js';
import type { CaptureInterface, CaptureSink } from '../../lib/capture/sink.js';
import { messageOf } from '../../lib/message-of.js';
import type { CaseCapture } from '../run-suite.js';
import { caseFileName } from './case-file-name.js';

export interface RunCaptureOptions {
  /** The whole run's file (--capture), opened already. */
  readonly whole?: CaptureFile;
  /** The folder of the case files (--capture-dir), there and writable. */
  readonly caseDirectory?: string;
  /** shb_userappl of the case files: the tool and its version. */
  readonly application: string;
  /** Called once, when the case files stop. */
  readonly onCaseFilesStopped?: (error: Error) => void;
}

export class RunCapture implements CaptureSink, CaseCapture {
  readonly #options: RunCaptureOptions;
  #case: CaptureFile | undefined;
  #caseFilesStopped = false;

  constructor(options: RunCaptureOptions) {
    this.#options = options;
  }

  record(link: CaptureInterface, timestampMicros: bigint, record: CaptureRecord): void {
    this.#options.whole?.record(link, timestampMicros, record);
    this.#case?.record(link, timestampMicros, record);
  }

  begin(row: number, caseName: string): void {
    this.end();
    const directory = this.#options.caseDirectory;
    if (directory === undefined || this.#caseFilesStopped) return;
    try {
      this.#case = new CaptureFile({
        path: join(directory, caseFileName(row, caseName)),
        application: this.#options.application,
        onStop: (error) => this.#stopCaseFiles(error),
      });
    } catch (error) {
      this.#stopCaseFiles(error instanceof Error ? error : new Error(messageOf(error)));
    }
  }

  end(): string | undefined {
    const file = this.#case;
    this.#case = undefined;
    if (file === undefined) return undefined;
    file.close();
    const [path] = file.files;
    if (path === undefined) return undefined;
    if (file.packets > 0) return path;
    try {
      unlinkSync(path);
    } catch {
      // An empty capture left behind harms nothing.
    }
    return undefined;
  }

  /** The whole run's files so far (--capture; more than one once rotated), oldest first. */
  get runFiles(): readonly string[] {
    return this.#options.whole?.files ?? [];
  }

  /** Ends the case in progress, then closes the whole run's file. */
  close(): void {
    this.end();
    this.#options.whole?.close();
  }

  #stopCaseFiles(error: Error): void {
    if (this.#caseFilesStopped) return;
    this.#caseFilesStopped = true;
    this.#options.onCaseFilesStopped?.(error);
  }
}
