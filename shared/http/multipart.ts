/**
 * The upload body: multipart/form-data with a JSON part first and one file
 * part named `file` second, parsed by busboy as a stream so limits stop the
 * parse where they are crossed rather than after everything is buffered.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import busboy from 'busboy';
import { InvalidRequest, TooLarge, UnsupportedMediaType } from '#shared/domain/errors.ts';
import { mediaTypeOf, parseJsonObject } from './hostile-input.ts';
import { invalidMultipart as invalid, multipartBoundary, repeatedParameter } from './multipart-boundary.ts';

export interface MultipartUpload {
  /** The JSON part, parsed (members whose value is null removed). */
  metadata: Record<string, unknown>;
  file: {
    /** As sent, path included; UTF-8 checked. */
    name: string;
    /** Media type of the part, lower case; busboy defaults a missing one to text/plain (RFC 7578). */
    contentType: string;
    bytes: Buffer;
    /** Lowercase hex SHA-256 of the bytes, hashed chunk by chunk as they were parsed (no second pass). */
    sha256: string;
  };
}

export interface MultipartLimits {
  maxFileBytes: number;
  maxJsonBytes: number;
}

/** Slices fed to the parser: a failure stops the parse within one slice. */
const FEED_BYTES = 64 * 1024;

export function parseMultipartUpload(contentType: string | undefined, body: Buffer | undefined, limits: MultipartLimits): Promise<MultipartUpload> {
  const boundary = multipartBoundary(contentType);
  try {
    checkPartHeaders(body ?? Buffer.alloc(0), boundary);
  } catch (error) {
    return Promise.reject(error as Error);
  }
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: { 'content-type': contentType as string },
        // We strip paths ourselves (both separators) and need the raw name to check it.
        preservePath: true,
        // Non-UTF-8 bytes decode to U+FFFD, which the checks below refuse.
        defParamCharset: 'utf8',
        defCharset: 'utf8',
        // busboy flags a part as truncated when it reaches the limit exactly, so allow one byte more.
        limits: { fileSize: limits.maxFileBytes + 1, fieldSize: limits.maxJsonBytes + 1 },
      });
    } catch (error) {
      return reject(invalid(`malformed multipart Content-Type: ${(error as Error).message}`));
    }
    const source = Readable.from(slices(body ?? Buffer.alloc(0)));
    let settled = false;
    let parts = 0;
    let metadata: Record<string, unknown> | undefined;
    let file: MultipartUpload['file'] | undefined;

    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      reject(error);
      parser.removeAllListeners('file').removeAllListeners('field');
      parser.on('error', () => undefined);
      source.unpipe(parser);
      source.destroy();
      // busboy is mid-write when it emits (it sets `truncated` right after 'limit'): stop it once that returns.
      process.nextTick(() => parser.destroy());
    };

    parser.on('field', (_name, value, info) => {
      parts += 1;
      if (parts !== 1) return fail(invalid(`part ${parts} must be the file: a part named file with a filename`));
      if (info.mimeType.toLowerCase() !== 'application/json') return fail(invalid('the first part must be the JSON part, with Content-Type application/json'));
      if (info.valueTruncated) return fail(invalid(`the JSON part must be at most ${limits.maxJsonBytes} bytes`));
      try {
        metadata = parseJsonPart(value);
      } catch (error) {
        fail(error as Error);
      }
    });

    parser.on('file', (name, stream, info) => {
      // Before anything can fail: destroying the parser destroys this stream with an error.
      stream.on('error', () => undefined);
      parts += 1;
      const chunks: Buffer[] = [];
      const hash = createHash('sha256');
      let size = 0;
      const isJson = parts === 1 && info.mimeType.toLowerCase() === 'application/json';
      if (parts === 1 && !isJson) return fail(invalid('the first part must be the JSON part, with Content-Type application/json'));
      if (parts === 2 && name !== 'file') return fail(invalid(`the file part must be named file, not ${JSON.stringify(name)}`));
      if (parts === 2 && !info.filename) return fail(invalid('the file part must carry a filename'));
      if (parts > 2) return fail(invalid('the body must have exactly two parts: the JSON part, then the file'));
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (isJson && size > limits.maxJsonBytes) return fail(invalid(`the JSON part must be at most ${limits.maxJsonBytes} bytes`));
        chunks.push(chunk);
        if (!isJson) hash.update(chunk);
      });
      stream.on('limit', () => fail(new TooLarge(`the file exceeds ${limits.maxFileBytes} bytes`, 'FILE_TOO_LARGE')));
      stream.on('end', () => {
        if (settled) return;
        if (isJson) {
          try {
            metadata = parseJsonPart(Buffer.concat(chunks).toString('utf8'));
          } catch (error) {
            fail(error as Error);
          }
          return;
        }
        if (info.filename?.includes('\uFFFD')) return fail(new InvalidRequest([{ field: 'file', message: 'name must be valid UTF-8' }], 'INVALID_MULTIPART'));
        file = { name: info.filename ?? '', contentType: info.mimeType.toLowerCase(), bytes: joinChunks(chunks, size), sha256: hash.digest('hex') };
      });
    });

    parser.on('error', (error: Error) => fail(invalid(`malformed multipart body: ${error.message}`)));
    parser.on('finish', () => {
      if (settled) return;
      if (!metadata) return fail(invalid('the body must start with the JSON part'));
      if (!file) return fail(invalid('the body must carry a file part named file with a filename'));
      settled = true;
      resolve({ metadata, file });
    });
    source.pipe(parser);
  });
}

function parseJsonPart(text: string): Record<string, unknown> {
  if (text.includes('\uFFFD')) throw invalid('the JSON part must be UTF-8');
  return parseJsonObject(text, 'INVALID_MULTIPART', 'the JSON part');
}

/** Parts whose headers are looked at: a body with more than two parts is refused anyway. */
const MAX_PARTS_CHECKED = 3;
const MAX_PART_HEADER_BYTES = 16 * 1024;

/**
 * What busboy reads of a part's headers without saying so. It decodes a part
 * (and an RFC 5987 `filename*`) in whatever charset the part declares: the
 * JSON part and the filename are read as UTF-8 text, and a `txt` file must be
 * UTF-8, so a part that declares another charset is 415, like a body that
 * does. And it takes the first of two Content-Disposition or Content-Type
 * headers, or of two `filename` parameters, where another parser (a proxy, a
 * scanner) may take the last: a part that says either twice is 400. This
 * reads only the header blocks of the first parts: the delimiter cannot
 * occur inside a part.
 */
function checkPartHeaders(body: Buffer, boundary: string): void {
  const delimiter = Buffer.from(`--${boundary}`, 'latin1');
  let position = body.indexOf(delimiter);
  for (let part = 0; part < MAX_PARTS_CHECKED && position >= 0; part += 1) {
    const headersStart = position + delimiter.length;
    if (body[headersStart] === 0x2d && body[headersStart + 1] === 0x2d) return; // the closing delimiter
    const headersEnd = body.indexOf('\r\n\r\n', headersStart, 'latin1');
    if (headersEnd < 0) return; // malformed: busboy says so
    const block = body.subarray(headersStart, Math.min(headersEnd, headersStart + MAX_PART_HEADER_BYTES)).toString('latin1');
    const seen = new Set<string>();
    for (const line of block.split('\r\n')) {
      const separator = line.indexOf(':');
      if (separator < 0) continue;
      const name = line.slice(0, separator).trim().toLowerCase();
      const value = line.slice(separator + 1);
      if (name === 'content-type' || name === 'content-disposition') {
        const header = name === 'content-type' ? 'Content-Type' : 'Content-Disposition';
        if (seen.has(name)) throw invalid(`part ${part + 1} has more than one ${header} header`);
        seen.add(name);
        const repeated = repeatedParameter(value);
        if (repeated) throw invalid(`part ${part + 1}'s ${header} names its ${repeated} parameter more than once`);
      }
      if (name === 'content-type') mediaTypeOf(value, `part ${part + 1}'s Content-Type`);
      if (name === 'content-disposition') {
        const extended = /filename\*\s*=\s*"?([^']*)'/i.exec(value);
        if (extended && extended[1]?.toLowerCase() !== 'utf-8') {
          throw new UnsupportedMediaType(`part ${part + 1}'s filename* charset must be utf-8, not ${JSON.stringify(extended[1]?.slice(0, 40))}`);
        }
      }
    }
    position = body.indexOf(Buffer.from(`\r\n--${boundary}`, 'latin1'), headersEnd);
    if (position >= 0) position += 2;
  }
}

function* slices(body: Buffer): Generator<Buffer> {
  for (let offset = 0; offset < body.length; offset += FEED_BYTES) yield body.subarray(offset, offset + FEED_BYTES);
}

/**
 * busboy hands out views into the request body where it can. When those
 * views are adjacent in one buffer the file is already contiguous there, so
 * return a view instead of copying up to 8 MB.
 */
function joinChunks(chunks: Buffer[], size: number): Buffer {
  const first = chunks[0];
  if (!first) return Buffer.alloc(0);
  let end = first.byteOffset + first.length;
  for (const chunk of chunks.slice(1)) {
    if (chunk.buffer !== first.buffer || chunk.byteOffset !== end) return Buffer.concat(chunks, size);
    end += chunk.length;
  }
  return Buffer.from(first.buffer, first.byteOffset, size);
}
