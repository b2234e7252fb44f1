import { describe, expect, it } from 'vitest';
import { TextScan, checkFile, detectType, sniffBinaryType } from '#shared/domain/documents/file-type.ts';
import { bmp, jpeg, mp3FrameSync, mp3WithId3, png, tiffBigEndian, tiffLittleEndian, txt, wav } from '../fixtures/documents.ts';

describe('type detection from leading bytes', () => {
  it.each([
    ['jpeg', jpeg],
    ['png', png],
    ['tiff', tiffLittleEndian],
    ['tiff', tiffBigEndian],
    ['bmp', bmp],
    ['wav', wav],
    ['mp3', mp3WithId3],
    ['mp3', mp3FrameSync],
    ['txt', txt],
    ['txt', Buffer.from('\uFEFFwith a byte order mark')],
  ])('detects %s', (type, bytes) => {
    expect(detectType(bytes)).toBe(type);
  });

  it.each([
    ['GIF', Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1')],
    ['PDF with binary', Buffer.from('%PDF-1.7\n\x00\xff', 'latin1')],
    ['RIFF that is AVI, not WAVE', Buffer.concat([Buffer.from('RIFF'), Buffer.from([0, 0, 0, 0]), Buffer.from('AVI LIST'), Buffer.alloc(4)])],
    ['AAC ADTS frame (layer 00)', Buffer.from([0xff, 0xf1, 0x50, 0x80, 0x00, 0x1f, 0xfc])],
    ['MPEG frame with the bad bitrate index', Buffer.from([0xff, 0xfb, 0xf0, 0x64])],
    ['half a TIFF header', Buffer.from([0x4d, 0x4d, 0x00])],
    ['Latin-1 text', Buffer.from('caf\xe9', 'latin1')],
    ['text with NUL', Buffer.from('a\x00b', 'latin1')],
    ['UTF-8 cut in the middle of a character', Buffer.from('✓', 'utf8').subarray(0, 2)],
  ])('refuses %s', (_label, bytes) => {
    expect(detectType(bytes)).toBeUndefined();
  });

  it('does not take text starting with "BM" for a bitmap', () => {
    expect(sniffBinaryType(Buffer.from('BMW service invoice, paid in full'))).toBeUndefined();
    expect(detectType(Buffer.from('BMW service invoice, paid in full'))).toBe('txt');
  });

  it('scans text across chunk boundaries, including a character split in two', () => {
    const bytes = Buffer.from('Reçu ✓ signé', 'utf8');
    for (let cut = 1; cut < bytes.length; cut += 1) {
      const scan = new TextScan();
      scan.push(bytes.subarray(0, cut));
      scan.push(bytes.subarray(cut));
      expect(scan.end()).toBe(true);
    }
    const truncated = new TextScan();
    truncated.push(Buffer.from([0x61, 0xe2, 0x9c]));
    expect(truncated.end()).toBe(false);
  });
});

describe('checking a file against its name, Content-Type and resource', () => {
  const facts = { fileName: 'a.png', contentType: 'image/png', detected: 'png' as const, size: 10, resource: 'application' as const };

  it('accepts matching facts, any case of extension, and octet-stream as "no opinion"', () => {
    expect(checkFile(facts, 'file')).toEqual({ type: 'png' });
    expect(checkFile({ ...facts, fileName: 'A.PNG' }, 'file')).toEqual({ type: 'png' });
    expect(checkFile({ ...facts, contentType: 'application/octet-stream' }, 'file')).toEqual({ type: 'png' });
    expect(checkFile({ ...facts, contentType: undefined }, 'file')).toEqual({ type: 'png' });
    expect(checkFile({ ...facts, fileName: 'a.tif', contentType: 'image/tiff', detected: 'tiff' }, 'file')).toEqual({ type: 'tiff' });
    expect(checkFile({ ...facts, fileName: 'a.wav', contentType: 'audio/wave', detected: 'wav', resource: 'dispute' }, 'file')).toEqual({ type: 'wav' });
  });

  it('reports every problem', () => {
    expect(checkFile({ ...facts, fileName: 'a.jpg', contentType: 'image/gif' }, 'file')).toEqual({
      issues: [
        { field: 'file', message: expect.stringContaining('content is png') },
        { field: 'file.content_type', message: expect.stringContaining('image/gif') },
      ],
    });
    expect(checkFile({ ...facts, fileName: 'a.mp3', contentType: 'audio/mpeg', detected: 'mp3', resource: 'bankaccount' }, 'file')).toEqual({
      issues: [{ field: 'file', message: 'mp3 files are accepted only for resource dispute' }],
    });
    expect(checkFile({ ...facts, detected: undefined, size: 0 }, 'file')).toEqual({ issues: [{ field: 'file', message: 'must not be empty' }] });
    // What the upload sees of an empty file: no bytes are valid UTF-8, so it is detected as txt; it is reported as empty, once.
    expect(checkFile({ ...facts, detected: 'txt', size: 0 }, 'file')).toEqual({ issues: [{ field: 'file', message: 'must not be empty' }] });
    expect(checkFile({ ...facts, fileName: 'notes.txt', contentType: 'text/plain', detected: undefined }, 'file')).toEqual({
      issues: [{ field: 'file', message: 'content is not text: a txt file must be UTF-8 without NUL characters' }],
    });
    expect('issues' in checkFile({ ...facts, fileName: 'a.gif', detected: undefined }, 'file')).toBe(true);
  });
});

describe('a refused extension', () => {
  it('says which type was refused and which are allowed', async () => {
    const { extensionRefusal } = await import('#shared/domain/documents/file-type.ts');
    expect(extensionRefusal('contract.PDF')).toBe('pdf is not an allowed type; allowed: jpeg, png, tiff, txt, bmp, wav, mp3 (a name ending in .jpg, .jpeg, .png, .tif, .tiff, .txt, .bmp, .wav, .mp3)');
    expect(extensionRefusal('README')).toMatch(/^has no extension; allowed: jpeg, /);
    expect(extensionRefusal('a.<script>')).toMatch(/^its extension is not an allowed type; allowed: /);
  });
});
