import { Readable } from 'node:stream';
import { CopyObjectCommand, DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, PutObjectLegalHoldCommand, PutObjectRetentionCommand, paginateListObjectsV2 } from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { DocumentFiles, StoredFileFacts } from '#shared/domain/documents/ports.ts';
import { OutcomeUnknown } from '#shared/domain/errors.ts';
import { mayHaveBeenApplied } from '../runtime/outcome.ts';

/**
 * Document files in S3. In AWS every write names SSE-KMS with the vault key
 * (the bucket policy should also refuse anything else); locally there is no
 * KMS behind s3rver, so the key is left out.
 */
export class S3DocumentFiles implements DocumentFiles {
  private readonly encryption: { ServerSideEncryption: 'aws:kms'; SSEKMSKeyId: string; BucketKeyEnabled: true };

  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly kmsKeyId: string,
  ) {
    this.encryption = { ServerSideEncryption: 'aws:kms', SSEKMSKeyId: kmsKeyId, BucketKeyEnabled: true };
  }

  async put(key: string, bytes: Uint8Array, contentType: string): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: bytes, ContentType: contentType, ...this.encryption }));
  }

  async delete(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (error) {
      // A timeout after sending, a dropped connection or a 5xx may have deleted it: the caller must not assume the file is there.
      if (mayHaveBeenApplied(error)) throw new OutcomeUnknown({ cause: error });
      throw error;
    }
  }

  async purge(key: string, versionId: string | undefined): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key, ...(versionId !== undefined ? { VersionId: versionId } : {}) }));
    } catch (error) {
      if (mayHaveBeenApplied(error)) throw new OutcomeUnknown({ cause: error });
      throw error;
    }
  }

  async retain(key: string, lock: { retainUntil?: string; legalHold: boolean }): Promise<void> {
    // Governance mode: only a principal granted s3:BypassGovernanceRetention (no function is) can shorten it or remove the version.
    if (lock.retainUntil !== undefined) {
      await this.client.send(
        new PutObjectRetentionCommand({ Bucket: this.bucket, Key: key, Retention: { Mode: 'GOVERNANCE', RetainUntilDate: endOfDay(lock.retainUntil) } }),
      );
    }
    await this.client.send(new PutObjectLegalHoldCommand({ Bucket: this.bucket, Key: key, LegalHold: { Status: lock.legalHold ? 'ON' : 'OFF' } }));
  }

  async head(key: string): Promise<StoredFileFacts | undefined> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { size: head.ContentLength ?? 0, contentType: head.ContentType, tag: head.ETag ?? '' };
    } catch (error) {
      if ((error as Error).name === 'NotFound' || (error as Error).name === 'NoSuchKey') return undefined;
      throw error;
    }
  }

  async keysUnder(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    for await (const page of paginateListObjectsV2({ client: this.client }, { Bucket: this.bucket, Prefix: prefix })) {
      keys.push(...(page.Contents ?? []).flatMap((object) => (object.Key ? [object.Key] : [])));
    }
    return keys;
  }

  async read(key: string): Promise<AsyncIterable<Uint8Array>> {
    const { Body } = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    return (Body as AsyncIterable<Uint8Array> | undefined) ?? Readable.from([]);
  }

  async copy(fromKey: string, toKey: string, sourceTag: string): Promise<'copied' | 'changed'> {
    try {
      await this.client.send(
        new CopyObjectCommand({
          Bucket: this.bucket,
          Key: toKey,
          CopySource: `${this.bucket}/${fromKey.split('/').map(encodeURIComponent).join('/')}`,
          CopySourceIfMatch: sourceTag,
          // The declared type goes with the bytes (it was checked against them); downloads name the type the bytes showed.
          MetadataDirective: 'COPY',
          ...this.encryption,
        }),
      );
      return 'copied';
    } catch (error) {
      const { name, $metadata } = error as { name?: string; $metadata?: { httpStatusCode?: number } };
      if (name === 'PreconditionFailed' || name === 'NoSuchKey' || $metadata?.httpStatusCode === 412) return 'changed';
      throw error;
    }
  }

  async downloadUrl(key: string, options: { fileName: string; contentType: string; expiresInSeconds: number }): Promise<string> {
    return getSignedUrl(
      this.client,
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: key,
        ResponseContentType: options.contentType,
        ResponseContentDisposition: contentDisposition(options.fileName),
      }),
      { expiresIn: options.expiresInSeconds },
    );
  }

  async uploadForm(key: string, options: { maxBytes: number; expiresInSeconds: number; sha256?: string }): Promise<{ url: string; fields: Record<string, string> }> {
    const pinned = {
      'x-amz-server-side-encryption': 'aws:kms',
      'x-amz-server-side-encryption-aws-kms-key-id': this.kmsKeyId,
      // S3 computes the posted file's SHA-256 and refuses it (400 BadDigest) unless it is this one.
      ...(options.sha256 !== undefined ? { 'x-amz-checksum-algorithm': 'SHA256', 'x-amz-checksum-sha256': Buffer.from(options.sha256, 'hex').toString('base64') } : {}),
    };
    const { url, fields } = await createPresignedPost(this.client, {
      Bucket: this.bucket,
      Key: key,
      // Fields become exact-match policy conditions: the key, the encryption and the checksum cannot be changed by the client.
      Fields: pinned,
      Conditions: [
        ['content-length-range', 1, options.maxBytes],
        // The client may declare the file's Content-Type; the finalizer checks it against the bytes.
        ['starts-with', '$Content-Type', ''],
        ...Object.entries(pinned).map(([name, value]) => ({ [name]: value })),
      ],
      Expires: options.expiresInSeconds,
    });
    return { url, fields };
  }
}

/** The end of a retention date (UTC): a document retained until a day is kept through that day. */
function endOfDay(date: string): Date {
  return new Date(`${date}T23:59:59.999Z`);
}

/** `attachment` with an ASCII fallback name and the exact UTF-8 name (RFC 6266 / RFC 8187). */
function contentDisposition(fileName: string): string {
  const fallback = fileName.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const encoded = encodeURIComponent(fileName).replace(/['()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
