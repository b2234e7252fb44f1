/**
 * Decides a file's type from its bytes and checks it against the name's
 * extension and the declared Content-Type. The bytes decide: a PNG renamed
 * `.jpg`, or a file whose leading bytes say one thing and whose name another,
 * is refused rather than stored under a misleading type.
 */
import type { FieldIssue } from '../errors.ts';
import type { DocumentResource, DocumentType } from './document.ts';
import { DOCUMENT_TYPES } from './document.ts';

/** Enough leading bytes for every signature below (the BMP check reads the DIB header size at 14..17). */
export const SNIFF_BYTES = 32;

export type BinaryType = Exclude<DocumentType, 'txt'>;

const TYPE_RULES: Readonly<Record<DocumentType, { extensions: readonly string[]; contentTypes: readonly string[] }>> = {
  jpeg: { extensions: ['jpg', 'jpeg'], contentTypes: ['image/jpeg'] },
  png: { extensions: ['png'], contentTypes: ['image/png'] },
  tiff: { extensions: ['tif', 'tiff'], contentTypes: ['image/tiff'] },
  bmp: { extensions: ['bmp'], contentTypes: ['image/bmp'] },
  txt: { extensions: ['txt'], contentTypes: ['text/plain'] },
  wav: { extensions: ['wav'], contentTypes: ['audio/wav', 'audio/x-wav', 'audio/wave'] },
  mp3: { extensions: ['mp3'], contentTypes: ['audio/mpeg'] },
};

/** The canonical media type of each type, stored with the object and served on download. */
export function mediaTypeOf(type: DocumentType): string {
  return TYPE_RULES[type].contentTypes[0] as string;
}

/** Declaring this Content-Type leaves the decision to the extension and the bytes. */
export const NEUTRAL_CONTENT_TYPES: readonly string[] = ['application/octet-stream'];

/** Every Content-Type a file part may declare. */
export const UPLOAD_CONTENT_TYPES: readonly string[] = [...new Set(DOCUMENT_TYPES.flatMap((type) => TYPE_RULES[type].contentTypes)), ...NEUTRAL_CONTENT_TYPES];

/** Only echeck Proof of Authorization disputes carry recordings. */
const AUDIO_TYPES: ReadonlySet<DocumentType> = new Set(['wav', 'mp3']);
const AUDIO_RESOURCE: DocumentResource = 'dispute';

const ALL_EXTENSIONS = DOCUMENT_TYPES.flatMap((type) => TYPE_RULES[type].extensions.map((extension) => `.${extension}`)).join(', ');

/** Why a name's extension is refused, and what to send instead: `pdf is not an allowed type; allowed: jpeg, png, ...`. */
export function extensionRefusal(fileName: string): string {
  const dot = fileName.lastIndexOf('.');
  const extension = dot > 0 && dot < fileName.length - 1 ? fileName.slice(dot + 1).toLowerCase() : undefined;
  const allowed = `allowed: ${DOCUMENT_TYPES.join(', ')} (a name ending in ${ALL_EXTENSIONS})`;
  if (extension === undefined) return `has no extension; ${allowed}`;
  // Echoed only when it is short and plain: the name is the client's text.
  return /^[a-z0-9]{1,10}$/.test(extension) ? `${extension} is not an allowed type; ${allowed}` : `its extension is not an allowed type; ${allowed}`;
}

/** The type a file name's extension claims, or undefined when it names none of the supported types. */
export function typeOfExtension(fileName: string): DocumentType | undefined {
  const dot = fileName.lastIndexOf('.');
  if (dot < 0) return undefined;
  const extension = fileName.slice(dot + 1).toLowerCase();
  return DOCUMENT_TYPES.find((type) => TYPE_RULES[type].extensions.includes(extension));
}

/** Matches the leading bytes against the binary signatures; undefined when none matches. */
export function sniffBinaryType(head: Uint8Array): BinaryType | undefined {
  const at = (offset: number) => head[offset] ?? -1;
  const ascii = (offset: number, text: string) => [...text].every((char, index) => at(offset + index) === char.charCodeAt(0));
  if (at(0) === 0xff && at(1) === 0xd8 && at(2) === 0xff) return 'jpeg';
  if ([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a].every((byte, index) => at(index) === byte)) return 'png';
  if ((ascii(0, 'II') && at(2) === 0x2a && at(3) === 0x00) || (ascii(0, 'MM') && at(2) === 0x00 && at(3) === 0x2a)) return 'tiff';
  if (ascii(0, 'RIFF') && ascii(8, 'WAVE')) return 'wav';
  if (ascii(0, 'BM') && isBmpInfoHeaderSize(head)) return 'bmp';
  if (ascii(0, 'ID3') || isMp3FrameHeader(at(0), at(1), at(2))) return 'mp3';
  return undefined;
}

/**
 * `BM` alone is two printable letters that many text files start with; a real
 * BMP carries one of the known DIB header sizes at offset 14.
 */
function isBmpInfoHeaderSize(head: Uint8Array): boolean {
  if (head.length < 18) return false;
  const size = (head[14] ?? 0) | ((head[15] ?? 0) << 8) | ((head[16] ?? 0) << 16) | ((head[17] ?? 0) << 24);
  return [12, 16, 40, 52, 56, 64, 108, 124].includes(size);
}

/**
 * An MPEG audio Layer III frame header: 11 sync bits, a defined version, layer
 * III, and neither the "bad" bitrate index nor the reserved sample rate. This
 * keeps JPEG (FF D8) and AAC ADTS (layer 00) out.
 */
function isMp3FrameHeader(b0: number, b1: number, b2: number): boolean {
  if (b0 !== 0xff || (b1 & 0xe0) !== 0xe0) return false;
  const version = (b1 >> 3) & 0b11;
  const layer = (b1 >> 1) & 0b11;
  const bitrateIndex = b2 >> 4;
  const sampleRateIndex = (b2 >> 2) & 0b11;
  return version !== 0b01 && layer === 0b01 && bitrateIndex !== 0b1111 && sampleRateIndex !== 0b11;
}

/**
 * Incremental check that bytes are text: valid UTF-8 without NUL. Feed chunks
 * as they stream in (a multi-byte character may straddle two chunks).
 */
export class TextScan {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private valid = true;

  push(chunk: Uint8Array): boolean {
    if (!this.valid) return false;
    if (chunk.includes(0)) return (this.valid = false);
    try {
      this.decoder.decode(chunk, { stream: true });
    } catch {
      this.valid = false;
    }
    return this.valid;
  }

  /** True when everything pushed was valid UTF-8 without NUL and no character was cut off at the end. */
  end(): boolean {
    if (!this.valid) return false;
    try {
      this.decoder.decode();
    } catch {
      this.valid = false;
    }
    return this.valid;
  }
}

/** The type of a whole file held in memory. */
export function detectType(bytes: Uint8Array): DocumentType | undefined {
  const binary = sniffBinaryType(bytes.subarray(0, SNIFF_BYTES));
  if (binary) return binary;
  const scan = new TextScan();
  scan.push(bytes);
  return scan.end() ? 'txt' : undefined;
}

export interface FileFacts {
  fileName: string;
  /** Media type the client declared for the file (lower case, no parameters); undefined when none. */
  contentType: string | undefined;
  /** Type the bytes show, or undefined when they are none of the supported types. */
  detected: DocumentType | undefined;
  size: number;
  /** Undefined when the request's own resource is invalid (that is reported elsewhere). */
  resource: DocumentResource | undefined;
}

/** Every rule a file breaks, or its type. `field` names the member to blame in the errors. */
export function checkFile(facts: FileFacts, field: string): { type: DocumentType } | { issues: FieldIssue[] } {
  const issues: FieldIssue[] = [];
  const claimed = typeOfExtension(facts.fileName);
  // No bytes are valid UTF-8 too: an empty file is empty, not a txt file that contradicts its name.
  const detected = facts.size === 0 ? undefined : facts.detected;
  if (facts.size === 0) issues.push({ field, message: 'must not be empty' });
  if (!claimed) issues.push({ field, message: extensionRefusal(facts.fileName) });
  if (facts.size > 0 && !detected) {
    issues.push({
      field,
      message: claimed === 'txt' ? 'content is not text: a txt file must be UTF-8 without NUL characters' : `content is none of the supported types (${DOCUMENT_TYPES.join(', ')})`,
    });
  }
  if (claimed && detected && claimed !== detected) {
    issues.push({ field, message: `content is ${detected}, which does not match the extension of ${JSON.stringify(facts.fileName)}` });
  }
  const type = detected ?? claimed;
  const declared = facts.contentType;
  if (type && declared !== undefined && !NEUTRAL_CONTENT_TYPES.includes(declared) && !TYPE_RULES[type].contentTypes.includes(declared)) {
    issues.push({ field: `${field}.content_type`, message: `${declared} does not match a ${type} file (expected ${TYPE_RULES[type].contentTypes.join(' or ')})` });
  }
  if (type && AUDIO_TYPES.has(type) && facts.resource !== undefined && facts.resource !== AUDIO_RESOURCE) {
    issues.push({ field, message: `${type} files are accepted only for resource ${AUDIO_RESOURCE}` });
  }
  return issues.length > 0 || !detected ? { issues } : { type: detected };
}

/** Checks a file name before any bytes exist (upload sessions): extension and resource rules only. */
export function checkFileName(fileName: string, resource: DocumentResource | undefined, field: string): FieldIssue[] {
  const claimed = typeOfExtension(fileName);
  if (!claimed) return [{ field, message: extensionRefusal(fileName) }];
  if (resource !== undefined && AUDIO_TYPES.has(claimed) && resource !== AUDIO_RESOURCE) {
    return [{ field, message: `${claimed} files are accepted only for resource ${AUDIO_RESOURCE}` }];
  }
  return [];
}
