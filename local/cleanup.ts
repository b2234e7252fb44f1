import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';

/**
 * What must not outlive `npm start`: child processes, the S3 emulator's folder
 * of uploaded document bytes, the runtime file. Each resource registers a
 * synchronous undo here; they run on process exit, however the exit comes
 * about (a second Ctrl+C, `process.exit` while an orderly stop is still
 * awaiting, an uncaught error), because an 'exit' listener cannot await.
 * An orderly close removes its entry first.
 */
const pending = new Map<symbol, () => void>();
let installed = false;

export function onExitSync(undo: () => void): () => void {
  if (!installed) {
    installed = true;
    process.once('exit', () => {
      for (const step of pending.values()) {
        try {
          step();
        } catch {
          // Best effort: one failure must not keep the others from running.
        }
      }
      pending.clear();
    });
  }
  const id = Symbol('cleanup');
  pending.set(id, undo);
  return () => void pending.delete(id);
}

/**
 * Removes `directory` when this process is gone, even after SIGKILL: a small
 * shell in its own process group waits for its stdin pipe to close (which the
 * kernel does when we die) and then deletes the folder. It ignores INT, TERM
 * and HUP, so a signal to our whole process group cannot stop it first.
 * Returns a function that lets it go (it still deletes the folder, if any left).
 */
export function removeWhenGone(directory: string): () => void {
  const guard = spawn('sh', ['-c', 'trap "" INT TERM HUP; read _; rm -rf -- "$1"', 'remove-when-gone', directory], {
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
  });
  guard.on('error', () => {}); // without sh the synchronous exit step still removes it
  guard.unref();
  (guard.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  return () => guard.stdin?.end();
}

export function removeDirectorySync(directory: string): void {
  rmSync(directory, { recursive: true, force: true });
}
