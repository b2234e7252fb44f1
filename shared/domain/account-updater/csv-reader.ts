/**
 * A streaming RFC 4180 reader: records come out as the bytes come in, so a
 * file of any size is read in constant memory (one record at a time, plus the
 * decoder's chunk). Handles a UTF-8 byte order mark, CRLF, LF and lone CR line
 * endings, quoted fields with commas, doubled quotes and line breaks.
 *
 * A record that breaks the quoting rules, or is longer than `maxRecordLength`,
 * still comes out (with `error` set) so that the caller can report its line
 * and carry on; the reader itself only throws on bytes that are not UTF-8.
 */

export interface CsvRecord {
  /** 1-based physical line the record starts on (the header is line 1). */
  line: number;
  fields: string[];
  /** Why the record could not be read as CSV; its fields are then unreliable. */
  error?: string;
}

export class CsvEncodingError extends Error {}

export interface CsvReaderOptions {
  maxRecordLength?: number;
}

type State = 'field-start' | 'unquoted' | 'quoted' | 'quote-in-quoted';

export async function* readCsv(source: AsyncIterable<Uint8Array | string>, options: CsvReaderOptions = {}): AsyncGenerator<CsvRecord> {
  const parser = new CsvParser(options.maxRecordLength ?? 8_192);
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const decode = (chunk: Uint8Array | undefined, stream: boolean): string => {
    try {
      return chunk ? decoder.decode(chunk, { stream }) : decoder.decode();
    } catch {
      throw new CsvEncodingError('the file is not valid UTF-8');
    }
  };
  for await (const chunk of source) {
    const text = typeof chunk === 'string' ? chunk : decode(chunk, true);
    yield* parser.push(text);
  }
  yield* parser.push(decode(undefined, false));
  yield* parser.end();
}

class CsvParser {
  private state: State = 'field-start';
  private field = '';
  private fields: string[] = [];
  private line = 1;
  private recordLine = 1;
  private recordLength = 0;
  private sawQuote = false;
  private error: string | undefined;
  private skipLineFeed = false;
  private atStart = true;

  constructor(private readonly maxRecordLength: number) {}

  push(text: string): CsvRecord[] {
    const out: CsvRecord[] = [];
    for (let index = 0; index < text.length; index += 1) {
      const char = text[index]!;
      if (this.atStart) {
        this.atStart = false;
        if (char === '\uFEFF') continue;
      }
      if (this.skipLineFeed) {
        this.skipLineFeed = false;
        if (char === '\n') continue;
      }
      this.recordLength += 1;
      switch (this.state) {
        case 'field-start':
          if (char === '"') {
            this.state = 'quoted';
            this.sawQuote = true;
          } else if (char === ',') this.endField();
          else if (char === '\n' || char === '\r') this.endRecord(char, out);
          else {
            this.append(char);
            this.state = 'unquoted';
          }
          break;
        case 'unquoted':
          if (char === ',') this.endField();
          else if (char === '\n' || char === '\r') this.endRecord(char, out);
          else {
            if (char === '"') this.error ??= 'a quote inside an unquoted field';
            this.append(char);
          }
          break;
        case 'quoted':
          if (char === '"') this.state = 'quote-in-quoted';
          else {
            if (char === '\n') this.line += 1;
            this.append(char);
          }
          break;
        case 'quote-in-quoted':
          if (char === '"') {
            this.append('"');
            this.state = 'quoted';
          } else if (char === ',') this.endField();
          else if (char === '\n' || char === '\r') this.endRecord(char, out);
          else {
            this.error ??= 'text after a closing quote';
            this.append(char);
            this.state = 'unquoted';
          }
          break;
      }
    }
    return out;
  }

  end(): CsvRecord[] {
    const out: CsvRecord[] = [];
    if (this.state === 'quoted') this.error ??= 'a quoted field is not closed';
    if (this.state !== 'field-start' || this.fields.length > 0) this.finishRecord(out);
    return out;
  }

  private append(char: string): void {
    if (this.recordLength > this.maxRecordLength) {
      this.error ??= `the row is longer than ${this.maxRecordLength} characters`;
      return;
    }
    this.field += char;
  }

  private endField(): void {
    this.fields.push(this.field);
    this.field = '';
    this.state = 'field-start';
  }

  private endRecord(char: string, out: CsvRecord[]): void {
    this.finishRecord(out);
    this.line += 1;
    this.recordLine = this.line;
    if (char === '\r') this.skipLineFeed = true;
  }

  private finishRecord(out: CsvRecord[]): void {
    this.fields.push(this.field);
    const blank = this.fields.length === 1 && this.fields[0] === '' && !this.sawQuote;
    if (!blank) out.push({ line: this.recordLine, fields: this.fields, ...(this.error ? { error: this.error } : {}) });
    this.fields = [];
    this.field = '';
    this.state = 'field-start';
    this.recordLength = 0;
    this.sawQuote = false;
    this.error = undefined;
  }
}

/** One CSV field as RFC 4180 writes it: quoted only when it has to be. */
export function csvField(value: string | number | undefined): string {
  const text = value === undefined ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
