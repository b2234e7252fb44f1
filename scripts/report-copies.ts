import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { s3 } from '#shared/aws/s3.ts';
import { config } from '#shared/runtime/config.ts';

/** Copies report objects of the reports bucket, byte for byte, to `<folder>/<key>`; returns the paths written. */
export async function copyReports(keys: readonly string[], folder: string): Promise<string[]> {
  const files: string[] = [];
  for (const key of keys) {
    const file = path.join(folder, ...key.split('/'));
    await mkdir(path.dirname(file), { recursive: true });
    const { Body } = await s3.send(new GetObjectCommand({ Bucket: config.reportsBucket, Key: key }));
    await pipeline(Body as Readable, createWriteStream(file));
    files.push(file);
  }
  return files;
}
