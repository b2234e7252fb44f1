import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { InvalidRequest, TooLarge, UnsupportedMediaType } from '#shared/domain/errors.ts';
import { multipartBoundary } from '#shared/http/multipart-boundary.ts';
import { parseMultipartUpload } from '#shared/http/multipart.ts';
import { BOUNDARY, multipartBody, png } from '../fixtures/documents.ts';
import type { Part } from '../fixtures/documents.ts';

const contentType = `multipart/form-data; boundary=${BOUNDARY}`;
const limits = { maxFileBytes: 16, maxJsonBytes: 64 };
const json: Part = { name: 'meta', contentType: 'application/json', body: '{"resource":"application","description":null}' };
const filePart = (body: Buffer | string, extra: Partial<Part> = {}): Part => ({ name: 'file', filename: 'a.txt', contentType: 'text/plain', body, ...extra });
const parse = (parts: Part[], type = contentType, options: { close?: boolean } = {}) => parseMultipartUpload(type, multipartBody(parts, BOUNDARY, options), limits);

describe('multipart upload parsing', () => {
  it('returns the JSON part (nulls removed) and the file as sent', async () => {
    const parsed = await parse([json, filePart('0123456789abcdef', { filename: 'C:\\dir\\a.txt' })]);
    expect(parsed.metadata).toEqual({ resource: 'application' });
    expect(parsed.file).toEqual({
      name: 'C:\\dir\\a.txt',
      contentType: 'text/plain',
      bytes: Buffer.from('0123456789abcdef'),
      // Hashed as it was parsed.
      sha256: createHash('sha256').update('0123456789abcdef').digest('hex'),
    });
  });

  it('accepts a file of exactly the limit and refuses one byte more with TooLarge', async () => {
    expect((await parse([json, filePart('x'.repeat(16))])).file.bytes.length).toBe(16);
    await expect(parse([json, filePart('x'.repeat(17))])).rejects.toBeInstanceOf(TooLarge);
  });

  it('refuses a JSON part over its limit, binary file bytes survive untouched', async () => {
    await expect(parse([{ ...json, body: `{"d":"${'x'.repeat(64)}"}` }, filePart('a')])).rejects.toThrow(/at most 64 bytes/);
    const bytes = Buffer.from([0x0d, 0x0a, 0x2d, 0x2d, 0x00, 0xff, 0x0d, 0x0a]);
    expect((await parse([json, filePart(bytes, { contentType: 'application/octet-stream', filename: 'a.bin' })])).file.bytes.equals(bytes)).toBe(true);
  });

  it('takes a JSON part that carries a filename, and a large binary file without corrupting it', async () => {
    const parsed = await parseMultipartUpload(
      contentType,
      multipartBody([{ ...json, filename: 'meta.json' }, filePart(Buffer.concat(Array.from({ length: 3000 }, () => png)), { filename: 'a.png', contentType: 'image/png' })], BOUNDARY),
      { maxFileBytes: 1_000_000, maxJsonBytes: 64 },
    );
    expect(parsed.file.bytes.equals(Buffer.concat(Array.from({ length: 3000 }, () => png)))).toBe(true);
  });

  it.each([
    ['a truncated body', [json, filePart('abc')], { close: false }, /malformed multipart body/],
    ['a file before the JSON part', [filePart('abc'), json], {}, /first part must be the JSON part/],
    ['a second file', [json, filePart('a'), filePart('b')], {}, /exactly two parts/],
    ['JSON that is not JSON', [{ ...json, body: '{' }, filePart('a')], {}, /not valid JSON/],
    ['JSON that is not an object', [{ ...json, body: 'null' }, filePart('a')], {}, /must be a JSON object/],
    ['a non-UTF-8 JSON part', [{ ...json, body: Buffer.from([0x7b, 0xff, 0x7d]) }, filePart('a')], {}, /must be UTF-8/],
    ['a non-UTF-8 file name', [json, { name: 'file', rawFilename: Buffer.from([0xff, 0x2e, 0x74, 0x78, 0x74]), body: 'a' }], {}, /valid UTF-8/],
    ['a file part without filename', [json, { name: 'file', contentType: 'application/octet-stream', body: 'a' }], {}, /carry a filename/],
    ['a missing file part', [json], {}, /file part named file/],
  ] as Array<[string, Part[], { close?: boolean }, RegExp]>)('refuses %s with 400', async (_label, parts, options, message) => {
    const failure = parse(parts, contentType, options);
    await expect(failure).rejects.toBeInstanceOf(InvalidRequest);
    await expect(failure).rejects.toThrow(message);
  });

  /** A body whose file part has the header lines given, as a client could send them. */
  const withFileHeaders = (headers: string) =>
    Buffer.concat([
      multipartBody([json], BOUNDARY, { close: false }),
      Buffer.from(`\r\n--${BOUNDARY}\r\n${headers}\r\n\r\nabc\r\n--${BOUNDARY}--\r\n`, 'latin1'),
    ]);
  it.each([
    ['two Content-Disposition headers', 'Content-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Disposition: form-data; name="file"; filename="b.png"', /more than one Content-Disposition header/],
    ['two Content-Type headers', 'Content-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\nContent-Type: image/png', /more than one Content-Type header/],
    ['two filename parameters', 'Content-Disposition: form-data; name="file"; filename="a.txt"; FILENAME="b.png"', /names its filename parameter more than once/],
  ])('refuses a part that says a thing twice, which parsers read differently: %s', async (_label, headers, message) => {
    const failure = parseMultipartUpload(contentType, withFileHeaders(headers), limits);
    await expect(failure).rejects.toBeInstanceOf(InvalidRequest);
    await expect(failure).rejects.toThrow(message);
  });

  it('takes filename and filename* together (RFC 6266), and a quoted value holding ; and =', async () => {
    const both = await parseMultipartUpload(contentType, withFileHeaders('Content-Disposition: form-data; name="file"; filename="a.txt"; filename*=UTF-8\'\'b%C3%A9.txt'), limits);
    expect(both.file.name).toBe('bé.txt');
    const quoted = await parseMultipartUpload(contentType, withFileHeaders('Content-Disposition: form-data; name="file"; filename="x; filename=y.txt"'), limits);
    expect(quoted.file.name).toBe('x; filename=y.txt');
  });
});

describe('multipart boundary', () => {
  it.each([
    ['b', 'multipart/form-data; boundary=b'],
    [BOUNDARY, `Multipart/Form-Data; charset=utf-8; boundary=${BOUNDARY}`],
    ['a b:c', 'multipart/form-data; boundary="a b:c"'],
    ['x'.repeat(70), `multipart/form-data; boundary=${'x'.repeat(70)}`],
  ])('accepts %s', (boundary, header) => {
    expect(multipartBoundary(header)).toBe(boundary);
  });

  it('answers 415 for another media type and 400 for a bad boundary', () => {
    expect(() => multipartBoundary('application/json')).toThrow(UnsupportedMediaType);
    expect(() => multipartBoundary(undefined)).toThrow(UnsupportedMediaType);
    for (const header of ['multipart/form-data', 'multipart/form-data; boundary=', `multipart/form-data; boundary=${'x'.repeat(71)}`, 'multipart/form-data; boundary="ab "', 'multipart/form-data; boundary=a@b', 'multipart/form-data; boundary=a; Boundary=b']) {
      expect(() => multipartBoundary(header), header).toThrow(InvalidRequest);
    }
  });
});
