/**
 * The boundary of a multipart Content-Type, apart from the parser (busboy) so
 * that routes which only need the boundary, such as the idempotency
 * fingerprint of every create, do not bundle it.
 */
import { InvalidRequest, UnsupportedMediaType } from '#shared/domain/errors.ts';
import { mediaTypeOf } from './hostile-input.ts';

/** RFC 2046 `boundary := 0*69<bchars> bcharsnospace`. */
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;

export const invalidMultipart = (message: string) => new InvalidRequest([{ field: '', message }], 'INVALID_MULTIPART');

/**
 * A parameter a header value (`type; name=value; ...`) names more than once,
 * if any: parsers disagree on which one counts (busboy takes the first, others
 * the last), so such a value is refused rather than read one way here and
 * another elsewhere. Quoted values may hold `;` and `=`.
 */
export function repeatedParameter(value: string): string | undefined {
  const seen = new Set<string>();
  for (const [, name] of value.matchAll(/;\s*([^=;\s]+)\s*=\s*(?:"(?:[^"\\]|\\.)*"|[^;]*)/g)) {
    const lower = name!.toLowerCase();
    if (seen.has(lower)) return lower;
    seen.add(lower);
  }
  return undefined;
}

/** The boundary of a multipart/form-data Content-Type: 415 for another type or charset, 400 for a missing, repeated or bad boundary. */
export function multipartBoundary(contentType: string | undefined): string {
  if (mediaTypeOf(contentType) !== 'multipart/form-data') {
    throw new UnsupportedMediaType(`Content-Type must be multipart/form-data, not ${JSON.stringify(contentType ?? '')}`);
  }
  const repeated = repeatedParameter(contentType ?? '');
  if (repeated) throw invalidMultipart(`Content-Type names its ${repeated} parameter more than once`);
  const parameter = /;\s*boundary\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]*))/i.exec(contentType ?? '');
  const boundary = parameter?.[1]?.replace(/\\(.)/g, '$1') ?? parameter?.[2];
  if (!boundary) throw invalidMultipart('Content-Type must carry a boundary parameter');
  if (!BOUNDARY.test(boundary)) throw invalidMultipart('the boundary must be 1 to 70 characters allowed by RFC 2046, not ending in a space');
  return boundary;
}
