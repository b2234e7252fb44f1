import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { InvalidRequest } from '#shared/domain/errors.ts';
import type { SourceRow } from '#shared/domain/account-updater/rows.ts';
import { AU_HEADER, isHeader } from '#shared/domain/account-updater/rows.ts';
import type { LineRange } from './state-machine.ts';
import { BATCH_ROWS, MAX_BATCH_BYTES } from './state-machine.ts';

/** Opens the update file from its start (a local file, or an S3 object streamed). */
export type UpdateFileSource = () => AsyncIterable<Uint8Array | string>;

/** Longer records are refused: no valid row comes near it. */
const MAX_RECORD_CHARS = 8_192;

/**
 * Reads an update file as rows, streaming (csv-parse): RFC 4180 with a UTF-8
 * byte order mark, CRLF or LF line endings (mixed in one file too: every
 * newline ends a record, as for the Step Functions CSV reader), quoted fields
 * and blank lines (skipped). `line` counts records, the header being 1.
 *
 * Bytes that are not UTF-8 and broken quoting stop the read with an
 * InvalidRequest (BAD_ENCODING, MALFORMED_CSV): after an unclosed quote no
 * parser can tell where the following rows start. The check step reads the
 * whole file this way before any batch starts, so such a file is refused
 * before anything is written.
 */
export async function* readUpdateFile(source: AsyncIterable<Uint8Array | string>): AsyncGenerator<SourceRow> {
  for await (const { row } of records(source, { firstLine: 1, bom: true })) yield row;
}

/**
 * The rows of one range of the file, numbered as in the whole file: parsing
 * starts on a record boundary, so the parser is in the state it was in there
 * when reading the whole file (a byte order mark is only the file's first
 * bytes). A range that does not end on its last line is not the range the
 * check step cut from these bytes, and is refused rather than misnumbered.
 */
export async function* readUpdateRange(source: AsyncIterable<Uint8Array | string>, range: LineRange): AsyncGenerator<SourceRow> {
  let last = range.first_line - 1;
  for await (const { row } of records(source, { firstLine: range.first_line, bom: range.start === 0 })) {
    last = row.line;
    yield row;
  }
  if (last !== range.last_line) throw new Error(`lines ${range.first_line} to ${range.last_line} (bytes ${range.start} to ${range.end}) read as lines ${range.first_line} to ${last}`);
}

async function* records(source: AsyncIterable<Uint8Array | string>, options: { firstLine: number; bom: boolean }): AsyncGenerator<{ row: SourceRow; end: number }> {
  // Both endings, always: left to discover it, the parser keeps the first line's ending, and a later line
  // with the other one would merge with the next row. `info` gives each record's end, in bytes of the file:
  // the parser re-encodes the decoded text, which for valid UTF-8 is the same bytes.
  const parser = parse({ bom: options.bom, relax_column_count: true, skip_empty_lines: true, max_record_size: MAX_RECORD_CHARS, record_delimiter: ['\r\n', '\n'], info: true });
  const input = Readable.from(decoded(source));
  input.on('error', (error) => parser.destroy(error));
  input.pipe(parser);
  let line = options.firstLine - 1;
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { bytes: number } }>) {
      line += 1;
      yield { row: { line, fields: record }, end: info.bytes };
    }
  } catch (error) {
    if (error instanceof InvalidRequest) throw error;
    const code = (error as { code?: string }).code;
    if (typeof code === 'string' && (code.startsWith('CSV_') || code === 'INVALID_OPENING_QUOTE')) {
      const at = (error as { lines?: number }).lines;
      refuse('MALFORMED_CSV', `${at === undefined ? '' : `line ${at}: `}${(error as Error).message.split(':')[0]}; nothing was applied`);
    }
    throw error;
  } finally {
    input.destroy();
  }
}

export interface CheckedFile {
  /** SHA-256 of the bytes, hex: the file's identity for duplicate and re-application handling. */
  file_id: string;
  /** Records, the header included: the merge step expects a batch result for each. */
  records: number;
  /** The file cut into ranges of whole records, in order, the first one from line 1 (the header). */
  ranges: LineRange[];
}

/**
 * The run's first step: one streaming pass over the whole file that refuses
 * it as a whole (EMPTY_FILE, BAD_HEADER, BAD_ENCODING, MALFORMED_CSV) before
 * any batch writes anything, names it by its content, and cuts it into
 * ranges of at most BATCH_ROWS records and MAX_BATCH_BYTES bytes (a single
 * longer record is a range of its own) for the batches.
 */
export async function checkUpdateFile(open: UpdateFileSource): Promise<CheckedFile> {
  const hash = createHash('sha256');
  async function* hashed() {
    for await (const chunk of open()) {
      hash.update(chunk);
      yield chunk;
    }
  }
  let lines = 0;
  const ranges: LineRange[] = [];
  let current: LineRange | undefined;
  for await (const { row, end } of records(hashed(), { firstLine: 1, bom: true })) {
    if (lines === 0 && !isHeader(row)) refuse('BAD_HEADER', `line 1: the header must be exactly ${AU_HEADER.join(',')}`);
    lines = row.line;
    if (current && (current.last_line - current.first_line + 1 >= BATCH_ROWS || end - current.start > MAX_BATCH_BYTES)) {
      ranges.push(current);
      current = undefined;
    }
    if (current) {
      current.end = end;
      current.last_line = row.line;
    } else {
      current = { start: ranges.at(-1)?.end ?? 0, end, first_line: row.line, last_line: row.line };
    }
  }
  if (!current) refuse('EMPTY_FILE', `the file is empty; it must start with the header ${AU_HEADER.join(',')}`);
  ranges.push(current);
  return { file_id: hash.digest('hex'), records: lines, ranges };
}

async function* decoded(source: AsyncIterable<Uint8Array | string>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const decode = (chunk?: Uint8Array): string => {
    try {
      return chunk ? decoder.decode(chunk, { stream: true }) : decoder.decode();
    } catch {
      return refuse('BAD_ENCODING', 'the file is not valid UTF-8');
    }
  };
  for await (const chunk of source) {
    const text = typeof chunk === 'string' ? chunk : decode(chunk);
    if (text) yield text;
  }
  const rest = decode();
  if (rest) yield rest;
}

/** The codes of a whole-file refusal (shared/platform/response-codes.ts, surface account-updater). */
export type FileRefusalCode = 'EMPTY_FILE' | 'BAD_HEADER' | 'BAD_ENCODING' | 'MALFORMED_CSV';

function refuse(code: FileRefusalCode, message: string): never {
  throw new InvalidRequest([{ field: 'file', message }], code);
}
