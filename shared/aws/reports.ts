import { Readable } from 'node:stream';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, paginateListObjectsV2 } from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { UpdateFileSource } from '#shared/account-updater/csv.ts';
import { RUNS_PREFIX } from '#shared/account-updater/state-machine.ts';
import type { BatchResult, BatchResults, ReportWriter } from '#shared/domain/account-updater/ports.ts';

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

/** S3's version id of an object written while its bucket kept no versions. */
export const NULL_VERSION = 'null';

/**
 * The objects of one Account Updater run in the bucket its event names: the
 * uploaded file (read in one version throughout), its ranges, its summary.
 */
export class S3RunObjects {
  constructor(private readonly s3: S3Client) {}

  /**
   * The version of an object that is current now. A run reads this one
   * version throughout, so an object replaced under the same key while the run
   * is under way gives its batches no other bytes than the check step read.
   */
  async currentVersion(bucket: string, key: string): Promise<string> {
    const { VersionId } = await this.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return VersionId ?? NULL_VERSION;
  }

  /** One version of an object as an update file source: each pass is a fresh GET streamed from the start. */
  source(bucket: string, key: string, versionId: string): UpdateFileSource {
    const s3 = this.s3;
    return async function* () {
      const { Body } = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, VersionId: versionId }));
      if (!Body) return;
      yield* Body as AsyncIterable<Uint8Array>;
    };
  }

  /** The bytes `start` to `end` (exclusive) of one version of an object, streamed: a batch's lines of the update file. */
  async *byteRange(bucket: string, key: string, versionId: string, range: { start: number; end: number }): AsyncGenerator<Uint8Array> {
    if (range.end <= range.start) return;
    const { Body } = await this.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, VersionId: versionId, Range: `bytes=${range.start}-${range.end - 1}` }));
    if (!Body) return;
    yield* Body as AsyncIterable<Uint8Array>;
  }

  async putJson(bucket: string, key: string, value: unknown): Promise<void> {
    await this.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: `${JSON.stringify(value, null, 2)}\n`, ContentType: 'application/json' }));
  }
}

/**
 * Batch results of a run, one small JSON object per batch under
 * `au-runs/<run id>/batches/`, named by the batch's first line (zero-padded)
 * so that listing returns them in line order. A retried batch overwrites its
 * own object.
 */
export class S3BatchResults implements BatchResults {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  async put(runId: string, result: BatchResult): Promise<void> {
    await this.s3.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.keyOf(runId, result.first_line), Body: JSON.stringify(result), ContentType: 'application/json' }));
  }

  async *list(runId: string): AsyncIterable<BatchResult> {
    const prefix = `${RUNS_PREFIX}${runId}/batches/`;
    for await (const page of paginateListObjectsV2({ client: this.s3 }, { Bucket: this.bucket, Prefix: prefix })) {
      // A few GETs ahead, results still in order.
      const keys = (page.Contents ?? []).map((object) => object.Key!).filter((key) => key.endsWith('.json'));
      const window: Array<Promise<BatchResult>> = [];
      for (let index = 0; index < keys.length; index += 1) {
        while (window.length < 8 && index + window.length < keys.length) window.push(this.read(keys[index + window.length]!));
        yield await window.shift()!;
      }
    }
  }

  private async read(key: string): Promise<BatchResult> {
    const { Body } = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    return JSON.parse(await Body!.transformToString('utf8')) as BatchResult;
  }

  private keyOf(runId: string, firstLine: number): string {
    return `${RUNS_PREFIX}${runId}/batches/${String(firstLine).padStart(10, '0')}.json`;
  }
}
