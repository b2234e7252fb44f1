import { Readable } from 'node:stream';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { ReportWriter, UpdateFileSource } from '#shared/domain/account-updater/ports.ts';

/**
 * The reports bucket: report files are streamed up as multipart uploads (5 MiB
 * parts, a few in flight), so a report of any size is written in bounded memory.
 */
export class S3ReportWriter implements ReportWriter {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  async write(key: string, body: AsyncIterable<string>): Promise<void> {
    const upload = new Upload({
      client: this.s3,
      params: { Bucket: this.bucket, Key: key, Body: Readable.from(encoded(body)), ContentType: 'text/csv; charset=utf-8' },
      queueSize: 4,
      partSize: 5 * 1024 * 1024,
      leavePartsOnError: false,
    });
    await upload.done();
  }
}

async function* encoded(body: AsyncIterable<string>): AsyncGenerator<Buffer> {
  for await (const text of body) yield Buffer.from(text, 'utf8');
}

/** An object as an update file source: each pass is a fresh GET streamed from the start. */
export function s3ObjectSource(s3: S3Client, bucket: string, key: string): UpdateFileSource {
  return async function* () {
    const { Body } = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    if (!Body) return;
    yield* Body as AsyncIterable<Uint8Array>;
  };
}

export async function putJson(s3: S3Client, bucket: string, key: string, value: unknown): Promise<void> {
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: `${JSON.stringify(value, null, 2)}\n`, ContentType: 'application/json' }));
}
