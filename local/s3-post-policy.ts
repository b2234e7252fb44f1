/**
 * S3's checks of a browser-form upload (POST object with a policy), which
 * s3rver does not make: the form read as S3 reads it (fields up to the file,
 * which comes last; names case-insensitive), and every condition of its policy
 * enforced generically (an exact match, as an object or `eq`; `starts-with`;
 * `content-length-range`), with every form field covered by a condition. The
 * policy's signature is checked by local/sigv4.ts.
 * https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-HTTPPOSTConstructPolicy.html
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import busboy from 'busboy';

export interface PostForm {
  /** Every field before the file, by lower-cased name (S3 ignores what follows the file). */
  readonly fields: Readonly<Record<string, string>>;
  /** The file's size in bytes; undefined when the form has no file. */
  readonly fileSize: number | undefined;
  /** Base64 SHA-256 of the file (to check an `x-amz-checksum-sha256` field against). */
  readonly fileSha256: string;
}

export interface PostPolicy {
  readonly expiration: Date;
  readonly conditions: readonly unknown[];
}

/** How S3 answers a form its policy does not allow. */
export interface PolicyFailure {
  readonly status: 400 | 403;
  readonly code: 'AccessDenied' | 'EntityTooLarge' | 'EntityTooSmall' | 'InvalidPolicyDocument' | 'InvalidArgument' | 'BadDigest';
  readonly message: string;
}

/** Fields no condition needs to cover. */
const UNCONDITIONED_FIELDS = new Set(['policy', 'x-amz-signature', 'file']);

/** Reads a buffered multipart/form-data body as S3 reads a POST object form. */
export function readPostForm(body: Buffer, headers: IncomingHttpHeaders): Promise<PostForm> {
  return new Promise((resolve, reject) => {
    const fields: Record<string, string> = {};
    let fileSize: number | undefined;
    const hash = createHash('sha256');
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers, limits: { fieldSize: 1024 * 1024 } });
    } catch (error) {
      reject(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    parser.on('field', (name, value) => {
      // S3 ignores every field after the file.
      if (fileSize === undefined) fields[name.toLowerCase()] = value;
    });
    parser.on('file', (name, stream) => {
      if (name.toLowerCase() !== 'file' || fileSize !== undefined) {
        stream.resume();
        return;
      }
      fileSize = 0;
      stream.on('data', (chunk: Buffer) => {
        fileSize = (fileSize ?? 0) + chunk.length;
        hash.update(chunk);
      });
    });
    parser.once('error', reject);
    parser.once('close', () => resolve({ fields, fileSize, fileSha256: hash.digest('base64') }));
    parser.end(body);
  });
}

/** The policy document of a form's `policy` field (base64 JSON), or undefined when it is not one. */
export function parsePolicy(encoded: string): PostPolicy | undefined {
  try {
    const document = JSON.parse(Buffer.from(encoded, 'base64').toString('utf8')) as { expiration?: unknown; conditions?: unknown };
    const expiration = typeof document.expiration === 'string' ? new Date(document.expiration) : undefined;
    if (!expiration || Number.isNaN(expiration.getTime()) || !Array.isArray(document.conditions)) return undefined;
    return { expiration, conditions: document.conditions };
  } catch {
    return undefined;
  }
}

/** The first way the form breaks its policy, as S3 answers it; undefined when the form may be stored. */
export function policyFailure(form: PostForm, policy: PostPolicy, bucket: string): PolicyFailure | undefined {
  if (form.fileSize === undefined) return { status: 400, code: 'InvalidArgument', message: 'POST requires exactly one file upload per request.' };
  const values: Record<string, string> = { ...form.fields, bucket };
  const covered = new Set<string>();
  for (const condition of policy.conditions) {
    const checked = checkCondition(condition, values, form.fileSize);
    if (checked.failure) return checked.failure;
    if (checked.field) covered.add(checked.field);
  }
  const extra = Object.keys(form.fields).filter((name) => !UNCONDITIONED_FIELDS.has(name) && !name.startsWith('x-ignore-') && !covered.has(name));
  if (extra.length > 0) return denied(`Extra input fields: ${extra.join(', ')}`);
  // S3 stores nothing whose bytes do not have the checksum the form declares.
  const declared = form.fields['x-amz-checksum-sha256'];
  if (declared !== undefined && declared !== form.fileSha256) return { status: 400, code: 'BadDigest', message: 'The SHA256 you specified did not match the calculated checksum.' };
  return undefined;
}

function checkCondition(condition: unknown, values: Readonly<Record<string, string>>, fileSize: number): { field?: string; failure?: PolicyFailure } {
  if (Array.isArray(condition)) {
    const [operator, subject, operand] = condition as unknown[];
    if (String(operator).toLowerCase() === 'content-length-range') {
      const [min, max] = [Number(subject), Number(operand)];
      if (!Number.isInteger(min) || !Number.isInteger(max)) return { failure: invalidPolicy('content-length-range needs two integers') };
      if (fileSize > max) return { failure: { status: 400, code: 'EntityTooLarge', message: 'Your proposed upload exceeds the maximum allowed size' } };
      if (fileSize < min) return { failure: { status: 400, code: 'EntityTooSmall', message: 'Your proposed upload is smaller than the minimum allowed size' } };
      return {};
    }
    if (typeof subject !== 'string' || !subject.startsWith('$') || typeof operand !== 'string') return { failure: invalidPolicy(`Invalid condition: ${JSON.stringify(condition)}`) };
    return match(String(operator).toLowerCase(), subject.slice(1).toLowerCase(), operand, values, condition);
  }
  if (typeof condition === 'object' && condition !== null) {
    const entries = Object.entries(condition);
    const [entry] = entries;
    if (entries.length !== 1 || !entry || typeof entry[1] !== 'string') return { failure: invalidPolicy(`Invalid condition: ${JSON.stringify(condition)}`) };
    return match('eq', entry[0].toLowerCase(), entry[1], values, condition);
  }
  return { failure: invalidPolicy(`Invalid condition: ${JSON.stringify(condition)}`) };
}

function match(operator: string, field: string, operand: string, values: Readonly<Record<string, string>>, condition: unknown): { field: string; failure?: PolicyFailure } {
  const value = values[field];
  const holds =
    operator === 'eq' ? value === operand : operator === 'starts-with' ? (value ?? '').startsWith(operand) && (value !== undefined || operand === '') : undefined;
  if (holds === undefined) return { field, failure: invalidPolicy(`Invalid condition operator: ${operator}`) };
  return holds ? { field } : { field, failure: denied(`Policy Condition failed: ${JSON.stringify(condition)}`) };
}

function denied(reason: string): PolicyFailure {
  return { status: 403, code: 'AccessDenied', message: `Invalid according to Policy: ${reason}` };
}

function invalidPolicy(reason: string): PolicyFailure {
  return { status: 400, code: 'InvalidPolicyDocument', message: `Invalid Policy: ${reason}` };
}
