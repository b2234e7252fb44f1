/**
 * The contract's rules for hostile input, in one place for every route (JSON
 * bodies, the JSON part of an upload, query parameters, headers):
 *
 * - a JSON member named `__proto__`, `constructor` or `prototype`, at any
 *   depth, is 400 naming it;
 * - a query parameter a route does not take is 400 naming it, whatever its name;
 * - JSON nested deeper than 32 levels is 400;
 * - a text value (or member name) holding U+0000 or an unpaired surrogate is 400,
 *   and so is one holding U+FFFD: bytes that were not UTF-8 arrive as it;
 * - a Content-Type `charset` other than `utf-8` is 415.
 *
 * Parsed JSON objects and the request's name/value maps have no prototype, so
 * no name a client sends can reach an inherited property of Object.prototype.
 * The domain never sees any of these shapes.
 */
import type { FieldIssue } from '#shared/domain/errors.ts';
import { InvalidRequest, UnsupportedMediaType } from '#shared/domain/errors.ts';

export const MAX_JSON_DEPTH = 32;
/** Names every JavaScript object answers to: refused as JSON members whatever their value. */
export const FORBIDDEN_MEMBER_NAMES: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);
/** An error that lists a field per bad string stays bounded (a 6 MB body of bad strings must not give a larger answer). */
export const MAX_ISSUES = 50;

/**
 * U+0000, or a high surrogate not followed by a low one, or a low surrogate
 * not preceded by a high one; or U+FFFD, which is what bytes that are not
 * UTF-8 (a surrogate's CESU-8 bytes among them) have become by the time a
 * handler reads the text, in AWS and locally alike: the only trace left of them.
 */
// eslint-disable-next-line no-control-regex -- finding U+0000 is the point
const UNSAFE_TEXT = /\u0000|\uFFFD|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What isSafeText refuses, as the errors name it. */
export const UNSAFE_TEXT_RULE = 'U+0000, U+FFFD (bytes that were not UTF-8) or unpaired UTF-16 surrogates';

export function isSafeText(text: string): boolean {
  return !UNSAFE_TEXT.test(text);
}

/** An object without a prototype: `record.constructor`, `record.__proto__` are plain missing members. */
export function emptyRecord<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/**
 * A query parameter whose name a route does not take is 400, whatever the
 * name: `constructor`, `toString` and `__proto__` are names like any other.
 * One issue per unknown name, at most MAX_ISSUES.
 */
export function unknownQueryParameterIssues(query: Readonly<Record<string, readonly string[]>>, known: ReadonlySet<string>): FieldIssue[] {
  return Object.keys(query)
    .filter((name) => !known.has(name))
    .slice(0, MAX_ISSUES)
    .map((name) => ({ field: name, message: 'is not a recognized query parameter' }));
}

/**
 * Text that claims JSON -> a prototype-free object with null members removed
 * (the contract treats them as absent), or an InvalidRequest. `syntaxCode` is
 * the response code for text that is not a JSON object (`INVALID_JSON` for a
 * body, `INVALID_MULTIPART` for an upload's JSON part).
 */
export function parseJsonObject(text: string, syntaxCode: 'INVALID_JSON' | 'INVALID_MULTIPART', what = 'the request body'): Record<string, unknown> {
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) {
    throw new InvalidRequest([{ field: '', message: `${what} is nested deeper than ${MAX_JSON_DEPTH} levels` }], syntaxCode);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new InvalidRequest([{ field: '', message: `${what} is not valid JSON` }], syntaxCode);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new InvalidRequest([{ field: '', message: `${what} must be a JSON object` }], syntaxCode);
  }
  const issues: FieldIssue[] = [];
  const result = cleanValue(parsed, '', issues) as Record<string, unknown>;
  if (issues.length > 0) throw new InvalidRequest(bounded(issues));
  return result;
}

/**
 * Whether any object or array in `text` opens more than `maxDepth` levels
 * deep. One pass, no recursion, strings skipped (a bracket inside a string is
 * text); it does not validate the JSON, JSON.parse does that afterwards.
 */
export function jsonDepthExceeds(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c /* \ */) index += 1;
      else if (code === 0x22 /* " */) inString = false;
    } else if (code === 0x22) {
      inString = true;
    } else if (code === 0x7b /* { */ || code === 0x5b /* [ */) {
      depth += 1;
      if (depth > maxDepth) return true;
    } else if (code === 0x7d /* } */ || code === 0x5d /* ] */) {
      depth -= 1;
    }
  }
  return false;
}

/**
 * Copies a parsed JSON value into prototype-free objects, dropping null
 * members and collecting every forbidden name and unsafe string. The
 * recursion is bounded: the text was checked for depth first.
 */
function cleanValue(value: unknown, path: string, issues: FieldIssue[]): unknown {
  if (typeof value === 'string') {
    if (!isSafeText(value)) issues.push({ field: path, message: `must not contain ${UNSAFE_TEXT_RULE}` });
    return value;
  }
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((element, index) => cleanValue(element, `${path}[${index}]`, issues));
  const result = emptyRecord<unknown>();
  for (const name of Object.keys(value)) {
    const memberPath = path ? `${path}.${name}` : name;
    if (FORBIDDEN_MEMBER_NAMES.has(name)) {
      issues.push({ field: memberPath, message: 'is not an allowed member name' });
      continue;
    }
    if (!isSafeText(name)) {
      issues.push({ field: path, message: `has a member name with ${UNSAFE_TEXT_RULE}` });
      continue;
    }
    // JSON.parse made every member an own data property, so this reads the member itself.
    const member = (value as Record<string, unknown>)[name];
    if (member === null) continue;
    result[name] = cleanValue(member, memberPath, issues);
  }
  return result;
}

function bounded(issues: FieldIssue[]): FieldIssue[] {
  if (issues.length <= MAX_ISSUES) return issues;
  return [...issues.slice(0, MAX_ISSUES), { field: '', message: `and ${issues.length - MAX_ISSUES} more problems of the same kind` }];
}

/**
 * The media type (lower case) of a Content-Type, after checking its charset:
 * text this service reads is UTF-8, and a body declared in another charset
 * would be misread, so it is 415 rather than decoded as UTF-8 anyway.
 */
export function mediaTypeOf(contentType: string | undefined, what = 'Content-Type'): string {
  const [type = '', ...parameters] = (contentType ?? '').split(';');
  for (const parameter of parameters) {
    const separator = parameter.indexOf('=');
    if (separator < 0) continue;
    if (parameter.slice(0, separator).trim().toLowerCase() !== 'charset') continue;
    const charset = parameter.slice(separator + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase();
    if (charset !== 'utf-8') throw new UnsupportedMediaType(`${what} charset must be utf-8, not ${JSON.stringify(charset.slice(0, 40))}`);
  }
  return type.trim().toLowerCase();
}
