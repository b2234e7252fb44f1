import type { S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { workbookStream } from '#shared/account-updater/xlsx.ts';
import type { WorkbookWriter } from '#shared/domain/account-updater/ports.ts';

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** The export's workbooks in the reports bucket, streamed up as multipart uploads like the CSV reports. */
export class S3WorkbookWriter implements WorkbookWriter {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  async writeWorkbook(key: string, sheet: { name: string; columns: readonly string[]; created: Date }, rows: AsyncIterable<readonly string[]>): Promise<void> {
    const upload = new Upload({
      client: this.s3,
      params: { Bucket: this.bucket, Key: key, Body: workbookStream(sheet, rows), ContentType: XLSX },
      queueSize: 4,
      partSize: 5 * 1024 * 1024,
      leavePartsOnError: false,
    });
    await upload.done();
  }
}
