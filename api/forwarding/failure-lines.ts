// Which forwarding failures get a log line: one per URL per step of the
// retry schedule (the first failed attempt of any delivery to that URL, the
// first second attempt, ...), until a delivery to the URL succeeds. A URL
// with nothing behind it fails every delivery of every box log at each step;
// one line a step says it as well, and `admin forwarding status` counts them
// all. The failures left out are counted into the URL's next line.

export class FailureLines {
  private readonly byUrl = new Map<string, { steps: Set<number>; notLogged: number }>();

  /** Whether the failure of an attempt (1 for a delivery's first) to `url`
   * gets a line: undefined when its step has one already, otherwise the
   * failures left out since the URL's last line. */
  take(url: string, attempt: number): number | undefined {
    const seen = this.byUrl.get(url) ?? { steps: new Set<number>(), notLogged: 0 };
    this.byUrl.set(url, seen);
    if (seen.steps.has(attempt)) {
      seen.notLogged += 1;
      return undefined;
    }
    seen.steps.add(attempt);
    const notLogged = seen.notLogged;
    seen.notLogged = 0;
    return notLogged;
  }

  /** A delivery to `url` went through: its next failure is news again. */
  delivered(url: string): void {
    this.byUrl.delete(url);
  }
}
