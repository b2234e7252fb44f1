import { CopyObjectCommand, DeleteObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { S3DocumentFiles } from '#shared/aws/document-files.ts';
import { OutcomeUnknown } from '#shared/domain/errors.ts';

/** The S3 adapter's conditional copy, which the local emulator does not enforce: what it sends and how it reads S3's refusals. */
const s3 = mockClient(S3Client);
afterEach(() => s3.reset());

describe('S3DocumentFiles.copy', () => {
  const files = new S3DocumentFiles(new S3Client({ region: 'us-east-1' }), 'documents', 'key-arn');
  const refusal = (name: string, status: number) => new S3ServiceException({ name, $fault: 'client', $metadata: { httpStatusCode: status }, message: name });

  it('copies only the version the finalizer looked at, with its metadata and the vault encryption', async () => {
    s3.on(CopyObjectCommand).resolves({});
    expect(await files.copy('uploads/org_1/doc_a', 'documents/org_1/doc_a/abc', '"abc"')).toBe('copied');
    expect(s3.commandCalls(CopyObjectCommand)[0]!.args[0].input).toEqual({
      Bucket: 'documents',
      Key: 'documents/org_1/doc_a/abc',
      CopySource: 'documents/uploads/org_1/doc_a',
      CopySourceIfMatch: '"abc"',
      MetadataDirective: 'COPY',
      ServerSideEncryption: 'aws:kms',
      SSEKMSKeyId: 'key-arn',
      BucketKeyEnabled: true,
    });
  });

  it("reads a source written since (412) or gone as 'changed', and lets any other failure through", async () => {
    s3.on(CopyObjectCommand).rejectsOnce(refusal('PreconditionFailed', 412)).rejectsOnce(refusal('NoSuchKey', 404)).rejectsOnce(refusal('InternalError', 500));
    expect(await files.copy('uploads/org_1/doc_a', 'documents/org_1/doc_a/abc', '"abc"')).toBe('changed');
    expect(await files.copy('uploads/org_1/doc_a', 'documents/org_1/doc_a/abc', '"abc"')).toBe('changed');
    await expect(files.copy('uploads/org_1/doc_a', 'documents/org_1/doc_a/abc', '"abc"')).rejects.toThrow('InternalError');
  });
});

describe('S3DocumentFiles.delete', () => {
  const files = new S3DocumentFiles(new S3Client({ region: 'us-east-1' }), 'documents', 'key-arn');
  const failure = (name: string, status: number) => new S3ServiceException({ name, $fault: status >= 500 ? 'server' : 'client', $metadata: { httpStatusCode: status }, message: name });

  it('says when a failed delete may have deleted the file all the same, and passes a refusal through as it is', async () => {
    s3.on(DeleteObjectCommand).rejectsOnce(failure('InternalError', 500)).rejectsOnce(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })).rejectsOnce(failure('SlowDown', 503)).rejectsOnce(failure('AccessDenied', 403));
    await expect(files.delete('documents/org_1/doc_a')).rejects.toBeInstanceOf(OutcomeUnknown);
    await expect(files.delete('documents/org_1/doc_a')).rejects.toBeInstanceOf(OutcomeUnknown);
    for (const refused of ['SlowDown', 'AccessDenied']) {
      const error = await files.delete('documents/org_1/doc_a').catch((caught: unknown) => caught);
      expect(error).not.toBeInstanceOf(OutcomeUnknown);
      expect((error as Error).name).toBe(refused);
    }
  });
});
