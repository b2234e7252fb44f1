import type { ChildProcess } from 'node:child_process';

/**
 * Follows a local runtime started as a child process (`npm start` or
 * local/start.ts): everything it prints, its exit, and the API's port once it
 * says it listens (rejected if it exits first, with what it printed).
 */
export function followRuntime(child: ChildProcess): { output: () => string; exited: Promise<number | null>; listening: Promise<number> } {
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const listening = new Promise<number>((resolve, reject) => {
    const poll = setInterval(() => {
      const match = /listening on http:\/\/localhost:(\d+)/.exec(output);
      if (match) {
        clearInterval(poll);
        resolve(Number(match[1]));
      }
    }, 50);
    void exited.then((code) => {
      clearInterval(poll);
      reject(new Error(`the local runtime exited with ${code}: ${output}`));
    });
  });
  return { output: () => output, exited, listening };
}
