import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { freePort } from './ports.ts';

export interface S3Local {
  endpoint: string;
  /** Emits s3rver's S3-style event records ("event"), used to drive notifications. */
  server: S3rver;
  close(): Promise<void>;
}

/** s3rver on loopback; files live in a temporary folder unless a data folder is given. */
export async function startS3Local(options: { dataDir?: string; buckets: readonly string[] }): Promise<S3Local> {
  const directory = options.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'payments-s3-')));
  const port = await freePort();
  const server = new S3rver({
    address: '127.0.0.1',
    port,
    silent: true,
    directory,
    vhostBuckets: false,
    configureBuckets: options.buckets.map((name) => ({ name })),
  });
  await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    server,
    close: async () => {
      await server.close();
      if (!options.dataDir) await rm(directory, { recursive: true, force: true });
    },
  };
}
