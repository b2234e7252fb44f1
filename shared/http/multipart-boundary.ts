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

/** The boundary of a multipart/form-data Content-Type: 415 for another type or charset, 400 for a missing or bad boundary. */
export function multipartBoundary(contentType: string | undefined): string {
  if (mediaTypeOf(contentType) !== 'multipart/form-data') {
    throw new UnsupportedMediaType(`Content-Type must be multipart/form-data, not ${JSON.stringify(contentType ?? '')}`);
  }
  const parameter = /;\s*boundary\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]*))/i.exec(contentType ?? '');
  const boundary = parameter?.[1]?.replace(/\\(.)/g, '$1') ?? parameter?.[2];
  if (!boundary) throw invalidMultipart('Content-Type must carry a boundary parameter');
  if (!BOUNDARY.test(boundary)) throw invalidMultipart('the boundary must be 1 to 70 characters allowed by RFC 2046, not ending in a space');
  return boundary;
}
