import * as z from 'zod/mini';
import type { FieldIssue } from '../errors.ts';
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

/** Checked by resourceIdIssues below; stated here for the schema. */
const resourceIdField = requiredString().check(
  z.meta({
    pattern: `^(${PREFIX_ALTERNATIVES})_[A-Za-z0-9_-]+$`,
    maxLength: MAX_RESOURCE_ID_LENGTH,
    description: `Id of the resource, with the prefix of its kind: ${Object.entries(RESOURCE_ID_PREFIXES).map(([resource, prefix]) => `${prefix} for ${resource}`).join(', ')}.`,
  }),
);

const RESOURCE_ID_REST = /^[A-Za-z0-9_-]+$/;

/**
 * resource_id must carry the prefix of its resource. Checked on the raw input
 * beside the schema (not as a refinement, which zod skips when another member
 * already failed), so every failing member is reported at once.
 */
function resourceIdIssues(input: unknown): FieldIssue[] {
  const { resource, resource_id: id } = (input && typeof input === 'object' ? input : {}) as Record<string, unknown>;
  const prefix = RESOURCE_ID_PREFIXES[DOCUMENT_RESOURCES.find((known) => known === resource) as DocumentResource];
  if (!prefix || typeof id !== 'string') return [];
  if (!id.startsWith(prefix) || id.length === prefix.length || !RESOURCE_ID_REST.test(id.slice(prefix.length))) {
    return [{ field: 'resource_id', message: `must be ${prefix} followed by letters, digits, _ or - for resource ${String(resource)}` }];
  }
  if (id.length > MAX_RESOURCE_ID_LENGTH) return [{ field: 'resource_id', message: `must be at most ${MAX_RESOURCE_ID_LENGTH} characters` }];
  return [];
}

/** The JSON part of a multipart upload. */
export const uploadMetadataSchema = z
  .strictObject({ resource: resourceField, resource_id: resourceIdField, description: descriptionField })
  .check(z.meta({ description: 'The JSON part of an upload. Members whose value is null are treated as absent; unknown members are refused.' }));

/** The body that opens an upload session. */
export const uploadSessionSchema = z
  .strictObject({
    resource: resourceField,
    resource_id: resourceIdField,
    description: descriptionField,
    file_name: requiredString().check(
      z.meta({
        description: `Name of the file to upload; any path (/ or \\) is removed, and what remains is at most ${MAX_FILE_NAME_CODE_POINTS} characters. Its extension must name a document type allowed for the resource.`,
      }),
    ),
  })
  .check(z.meta({ description: 'Members whose value is null are treated as absent; unknown members are refused.' }));

export type UploadMetadata = z.infer<typeof uploadMetadataSchema>;
export type UploadSessionRequest = z.infer<typeof uploadSessionSchema>;

/** Every issue of the input, and the parsed value when there is none. */
export type Checked<T> = { value: T; issues: [] } | { value: undefined; issues: FieldIssue[] };

function check<T>(schema: z.ZodMiniType<T>, input: unknown): Checked<T> {
  const result = schema.safeParse(input);
  const issues = [...(result.success ? [] : result.error.issues.flatMap(toFieldIssues)), ...resourceIdIssues(input)];
  return result.success && issues.length === 0 ? { value: result.data, issues: [] } : { value: undefined, issues };
}

function toFieldIssues(issue: z.core.$ZodIssue): FieldIssue[] {
  if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => ({ field: key, message: 'is not a known member' }));
  return [{ field: issue.path.map(String).join('.'), message: issue.message }];
}

export const checkUploadMetadata = (input: unknown): Checked<UploadMetadata> => check(uploadMetadataSchema, input);
export const checkUploadSessionRequest = (input: unknown): Checked<UploadSessionRequest> => check(uploadSessionSchema, input);

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

/** The resource named by otherwise invalid metadata, so file rules that depend on it still report. */
export function resourceOf(metadata: unknown): DocumentResource | undefined {
  const resource = (metadata as { resource?: unknown } | null)?.resource;
  return DOCUMENT_RESOURCES.find((known) => known === resource);
}
