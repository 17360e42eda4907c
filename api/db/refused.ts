// A database parkbench will not use as asked: missing for a command
// that only reads, another program's SQLite file, one written by a newer
// parkbench, or one a read-only command would have to migrate. The message is
// one line for the operator; the CLI exits 2 with it, as for a bad flag.
export class DatabaseRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseRefusedError';
  }
}
