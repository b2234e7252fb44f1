import * as z from 'zod/mini';
import type { FieldIssue } from '../errors.ts';
import { InvalidRequest } from '../errors.ts';
import type { Parsed, RefinementCtx } from '../validation.ts';
import { acrossMembers, failed, parseWith } from '../validation.ts';
import { checkFileName } from './file-type.ts';
import type { DocumentResource } from './document.ts';
import {
  DOCUMENT_RESOURCES,
  MAX_DESCRIPTION_CODE_POINTS,
  MAX_FILE_NAME_CODE_POINTS,
  MAX_RESOURCE_ID_LENGTH,
  RESOURCE_ID_PREFIXES,
} from './document.ts';

/** Lengths count Unicode code points, not UTF-16 units. */
const codePoints = (text: string) => [...text].length;

const requiredString = (what = 'a string') =>
  z.string({ error: (issue) => (issue.input === undefined ? 'is required' : `must be ${what}`) });

const resourceField = z.enum(DOCUMENT_RESOURCES as [DocumentResource, ...DocumentResource[]], {
  error: (issue) => (issue.input === undefined ? 'is required' : `must be one of ${DOCUMENT_RESOURCES.join(', ')}`),
});

// JSON Schema's maxLength counts code points too; the refinement is invisible to z.toJSONSchema, hence the metadata.
const descriptionField = z.optional(
  z.string({ error: 'must be a string' }).check(
    z.refine((text) => codePoints(text) <= MAX_DESCRIPTION_CODE_POINTS, { error: `must be at most ${MAX_DESCRIPTION_CODE_POINTS} characters` }),
    z.meta({ maxLength: MAX_DESCRIPTION_CODE_POINTS, description: 'Short description, for example receipt or voided check.' }),
  ),
);

const PREFIX_ALTERNATIVES = Object.values(RESOURCE_ID_PREFIXES).map((prefix) => prefix.slice(0, -1)).join('|');

/** resource_id's prefix depends on resource: stated here for the schema, enforced by resourceIdRule. */
const resourceIdField = requiredString().check(
  z.meta({
    pattern: `^(${PREFIX_ALTERNATIVES})_[A-Za-z0-9_-]+$`,
    maxLength: MAX_RESOURCE_ID_LENGTH,
    description: `Id of the resource, with the prefix of its kind: ${Object.entries(RESOURCE_ID_PREFIXES).map(([resource, prefix]) => `${prefix} for ${resource}`).join(', ')}.`,
  }),
);

const RESOURCE_ID_REST = /^[A-Za-z0-9_-]+$/;
const SHA256_HEX = /^[0-9a-fA-F]{64}$/;

type DocumentMembers = { resource?: unknown; resource_id?: unknown; file_name?: unknown };

/** resource_id must carry the prefix of its resource (when both are otherwise valid). */
function resourceIdRule(value: DocumentMembers, ctx: RefinementCtx): void {
  const resource = resourceOf(value);
  const id = value.resource_id;
  if (!resource || typeof id !== 'string') return;
  const prefix = RESOURCE_ID_PREFIXES[resource];
  const issue = (message: string) => ctx.addIssue({ code: 'custom', path: ['resource_id'], message });
  if (!id.startsWith(prefix) || id.length === prefix.length || !RESOURCE_ID_REST.test(id.slice(prefix.length))) {
    issue(`must be ${prefix} followed by letters, digits, _ or - for resource ${resource}`);
  } else if (id.length > MAX_RESOURCE_ID_LENGTH) {
    issue(`must be at most ${MAX_RESOURCE_ID_LENGTH} characters`);
  }
}

/** A session's file name, once its shape passed: the name's own rules, then (when they pass) its extension against the resource. */
function fileNameRule(value: DocumentMembers, ctx: RefinementCtx): void {
  if (typeof value.file_name !== 'string' || failed(ctx, 'file_name')) return;
  const normalized = normalizeFileName(value.file_name, 'file_name');
  const issues = normalized.issues.length > 0 ? normalized.issues : checkFileName(normalized.name, resourceOf(value), 'file_name');
  for (const { field, message } of issues) ctx.addIssue({ code: 'custom', path: [field], message });
}

/** The JSON part of a multipart upload. */
export const uploadMetadataSchema = z
  .strictObject({ resource: resourceField, resource_id: resourceIdField, description: descriptionField })
  .check(
    acrossMembers(resourceIdRule),
    z.meta({ description: 'The JSON part of an upload. Members whose value is null are treated as absent; unknown members are refused.' }),
  );

/** The body that opens an upload session; `file_name` comes out without its path. */
export const uploadSessionSchema = z.pipe(
  z
    .strictObject({
      resource: resourceField,
      resource_id: resourceIdField,
      description: descriptionField,
      file_name: requiredString().check(
        z.meta({
          description: `Name of the file to upload; any path (/ or \\) is removed, and what remains is at most ${MAX_FILE_NAME_CODE_POINTS} characters. Its extension must name a document type allowed for the resource.`,
        }),
      ),
      sha256: z.optional(
        z.string({ error: 'must be a string' }).check(
          z.regex(SHA256_HEX, { error: 'must be the SHA-256 of the file: 64 hexadecimal digits' }),
          z.meta({ description: 'SHA-256 of the file (hex). When given, the presigned POST accepts only a file with this hash (S3 checks it), and the finalizer checks it again.' }),
        ),
      ),
    })
    .check(
      acrossMembers((value, ctx) => {
        resourceIdRule(value, ctx);
        fileNameRule(value, ctx);
      }),
      z.meta({ description: 'Members whose value is null are treated as absent; unknown members are refused.' }),
    ),
  z.transform((value) => ({
    ...value,
    file_name: normalizeFileName(value.file_name, 'file_name').name,
    ...(value.sha256 !== undefined ? { sha256: value.sha256.toLowerCase() } : {}),
  })),
);

export type UploadMetadata = z.output<typeof uploadMetadataSchema>;
export type UploadSessionRequest = z.output<typeof uploadSessionSchema>;

/** The JSON part of an upload, with every issue (the file's own are added to them by the use case). */
export const parseUploadMetadata = (input: unknown): Parsed<UploadMetadata> => parseWith(uploadMetadataSchema, input);

/** The body of a session, or 400 naming every failing field. */
export function parseUploadSessionRequest(input: unknown): UploadSessionRequest {
  const parsed = parseWith(uploadSessionSchema, input);
  if (parsed.value === undefined) throw new InvalidRequest(parsed.issues);
  return parsed.value;
}

/**
 * The name stored as `file`: whatever follows the last `/` or `\`, so a
 * client's local path never reaches storage. Issues are reported on `field`.
 */
export function normalizeFileName(raw: string, field: string): { name: string; issues: FieldIssue[] } {
  const name = raw.slice(Math.max(raw.lastIndexOf('/'), raw.lastIndexOf('\\')) + 1);
  const issues: FieldIssue[] = [];
  // An upload's errors name its `file` part, so they say it is the name that is wrong; a session's `file_name` is the name.
  const must = field.endsWith('name') ? 'must' : 'name must';
  if (name.includes('\uFFFD')) issues.push({ field, message: `${must} be valid UTF-8` });
  // C0, DEL and C1: every character Unicode classes as a control.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) issues.push({ field, message: `${must} not contain control characters` });
  if (name === '' || name === '.' || name === '..') issues.push({ field, message: `${must} not be empty` });
  if (codePoints(name) > MAX_FILE_NAME_CODE_POINTS) issues.push({ field, message: `${must} be at most ${MAX_FILE_NAME_CODE_POINTS} characters` });
  return { name, issues };
}

/** The resource named by otherwise invalid metadata, so rules that depend on it still report. */
export function resourceOf(metadata: unknown): DocumentResource | undefined {
  const resource = (metadata as { resource?: unknown } | null)?.resource;
  return DOCUMENT_RESOURCES.find((known) => known === resource);
}
