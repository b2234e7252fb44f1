import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { onExitSync, removeDirectorySync, removeWhenGone } from './cleanup.ts';
import { assertPortFree, freePort, LOCAL_HOST } from './ports.ts';

export interface S3Local {
  endpoint: string;
  /** Emits s3rver's S3-style event records ("event"), used to drive notifications. */
  server: S3rver;
  close(): Promise<void>;
}

/**
 * s3rver on loopback. Without a data folder its files (uploaded documents) live
 * in a private temporary folder, in RAM (/dev/shm) where the system has one, and
 * that folder goes when the runtime goes: on close, on any exit, and through a
 * guard process even when this process is killed outright.
 */
export async function startS3Local(options: { dataDir?: string; buckets: readonly string[]; port?: number }): Promise<S3Local> {
  await assertPortFree(options.port ?? 0, 'S3 emulator');
  const port = options.port || (await freePort());
  let directory = options.dataDir;
  let forget = () => {};
  if (!directory) {
    const temporary = await privateTemporaryDirectory();
    directory = temporary;
    const release = removeWhenGone(temporary);
    const deregister = onExitSync(() => removeDirectorySync(temporary));
    forget = () => {
      deregister();
      release();
    };
  }
  const server = new S3rver({
    address: LOCAL_HOST,
    port,
    silent: true,
    directory,
    vhostBuckets: false,
    configureBuckets: options.buckets.map((name) => ({ name })),
  });
  try {
    await server.run();
  } catch (error) {
    if (!options.dataDir) await rm(directory, { recursive: true, force: true });
    forget();
    throw error;
  }
  return {
    endpoint: `http://${LOCAL_HOST}:${port}`,
    server,
    close: async () => {
      await server.close();
      if (!options.dataDir) await rm(directory, { recursive: true, force: true });
      forget();
    },
  };
}

async function privateTemporaryDirectory(): Promise<string> {
  if (existsSync('/dev/shm')) {
    try {
      return await mkdtemp(path.join('/dev/shm', 'payments-s3-'));
    } catch {
      // Not writable here: the ordinary temporary folder will do.
    }
  }
  return mkdtemp(path.join(os.tmpdir(), 'payments-s3-'));
}
