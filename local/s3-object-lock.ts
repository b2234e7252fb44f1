/**
 * S3 Object Lock (governance mode) in front of s3rver, which has neither
 * versions nor locks: the gate keeps each locked object's retention date and
 * legal hold, answers PutObjectRetention / PutObjectLegalHold (and their GETs)
 * itself, and refuses what S3 refuses on a locked version without
 * `x-amz-bypass-governance-retention: true` from a principal granted
 * s3:BypassGovernanceRetention (no function is; the operator is): shortening
 * the retention, and removing the bytes. s3rver keeps one version per key, so
 * a delete or an overwrite there is the removal of the locked version itself,
 * and both are refused (in AWS they add a delete marker or a new version, and
 * the locked version stays).
 * https://docs.aws.amazon.com/AmazonS3/latest/userguide/object-lock.html
 */
import { AwsServiceError } from './gate-server.ts';

export interface ObjectLock {
  retainUntil?: Date;
  legalHold: boolean;
}

export class ObjectLocks {
  private readonly locks = new Map<string, ObjectLock>();

  private static id(bucket: string, key: string): string {
    return `${bucket}/${key}`;
  }

  get(bucket: string, key: string): ObjectLock | undefined {
    return this.locks.get(ObjectLocks.id(bucket, key));
  }

  /** Whether the object may not be removed now. */
  isLocked(bucket: string, key: string, now = new Date()): boolean {
    const lock = this.get(bucket, key);
    return lock !== undefined && (lock.legalHold || (lock.retainUntil !== undefined && lock.retainUntil.getTime() > now.getTime()));
  }

  /** A delete or an overwrite of the object: refused while locked, unless governance is bypassed. */
  checkRemoval(bucket: string, key: string, bypass: boolean): void {
    if (!this.isLocked(bucket, key)) return;
    const lock = this.get(bucket, key)!;
    // A legal hold is not bypassed by governance rights: it has to be released first.
    if (lock.legalHold || !bypass) throw new AwsServiceError('AccessDenied', 'Access Denied because object protected by object lock.', 403);
  }

  /** Removes what the gate knows of an object once it is gone. */
  forget(bucket: string, key: string): void {
    this.locks.delete(ObjectLocks.id(bucket, key));
  }

  /** PutObjectRetention: a later date always; an earlier one (or none) only bypassing governance. */
  putRetention(bucket: string, key: string, body: string, bypass: boolean): void {
    const mode = /<Mode>([^<]*)<\/Mode>/.exec(body)?.[1];
    const until = /<RetainUntilDate>([^<]*)<\/RetainUntilDate>/.exec(body)?.[1];
    const date = until === undefined ? undefined : new Date(until);
    if ((mode !== undefined && mode !== 'GOVERNANCE') || (date !== undefined && Number.isNaN(date.getTime()))) {
      throw new AwsServiceError('MalformedXML', 'The XML you provided was not well-formed or did not validate against our published schema.');
    }
    const lock = this.get(bucket, key) ?? { legalHold: false };
    const shortened = lock.retainUntil !== undefined && lock.retainUntil.getTime() > Date.now() && (date === undefined || date.getTime() < lock.retainUntil.getTime());
    if (shortened && !bypass) throw new AwsServiceError('AccessDenied', 'Access Denied because object protected by object lock.', 403);
    this.locks.set(ObjectLocks.id(bucket, key), { ...lock, ...(date !== undefined ? { retainUntil: date } : { retainUntil: undefined }) });
  }

  putLegalHold(bucket: string, key: string, body: string): void {
    const status = /<Status>([^<]*)<\/Status>/.exec(body)?.[1];
    if (status !== 'ON' && status !== 'OFF') throw new AwsServiceError('MalformedXML', 'The XML you provided was not well-formed or did not validate against our published schema.');
    const lock = this.get(bucket, key) ?? { legalHold: false };
    this.locks.set(ObjectLocks.id(bucket, key), { ...lock, legalHold: status === 'ON' });
  }

  retentionXml(bucket: string, key: string): string {
    const until = this.get(bucket, key)?.retainUntil;
    if (!until) throw new AwsServiceError('NoSuchObjectLockConfiguration', 'The specified object does not have a ObjectLock configuration', 404);
    return `<?xml version="1.0" encoding="UTF-8"?>\n<Retention><Mode>GOVERNANCE</Mode><RetainUntilDate>${until.toISOString()}</RetainUntilDate></Retention>`;
  }

  legalHoldXml(bucket: string, key: string): string {
    const lock = this.get(bucket, key);
    if (!lock) throw new AwsServiceError('NoSuchObjectLockConfiguration', 'The specified object does not have a ObjectLock configuration', 404);
    return `<?xml version="1.0" encoding="UTF-8"?>\n<LegalHold><Status>${lock.legalHold ? 'ON' : 'OFF'}</Status></LegalHold>`;
  }
}
