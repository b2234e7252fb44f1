import { readFile, rename, writeFile } from 'node:fs/promises';

/**
 * A stand-in's state kept in one JSON file of the runtime's data dir
 * (LOCAL_DATA_DIR), or nowhere when there is none: read once at start,
 * written whole after each change. Writes are chained so an older snapshot
 * can never land after a newer one, and go through a rename so a crash
 * mid-write cannot truncate the file. It holds key material and secrets in
 * the clear: 0600.
 */
export class StandinDataFile {
  private saving: Promise<void> = Promise.resolve();

  constructor(readonly path: string | undefined) {}

  /** The file's JSON; undefined without a data dir or before the first write. */
  async read(): Promise<unknown> {
    if (!this.path) return undefined;
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    return JSON.parse(text) as unknown;
  }

  write(data: unknown): Promise<void> {
    const file = this.path;
    if (!file) return Promise.resolve();
    const text = `${JSON.stringify(data, null, 2)}\n`;
    const write = this.saving.then(async () => {
      const temporary = `${file}.${process.pid}.tmp`;
      await writeFile(temporary, text, { mode: 0o600 });
      await rename(temporary, file);
    });
    this.saving = write.catch(() => undefined);
    return write;
  }

  /** Once every write so far has landed (or failed). */
  flushed(): Promise<void> {
    return this.saving;
  }
}
