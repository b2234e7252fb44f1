import { describe, expect, it } from 'vitest';
import { InvalidRequest } from '#shared/domain/errors.ts';
import { normalizeFileName, parseUploadMetadata, parseUploadSessionRequest } from '#shared/domain/documents/validation.ts';

/** The issues a session body is refused with (none when it parses). */
function sessionIssues(body: unknown) {
  try {
    parseUploadSessionRequest(body);
    return [];
  } catch (error) {
    if (!(error instanceof InvalidRequest)) throw error;
    return error.issues;
  }
}

describe('document metadata', () => {
  it('accepts each resource with its own id prefix', () => {
    for (const [resource, id] of [['application', 'app_1'], ['dispute', 'dsp_Ab-9_z'], ['bankaccount', `bac_${'x'.repeat(22)}`]]) {
      expect(parseUploadMetadata({ resource, resource_id: id }).issues).toEqual([]);
    }
  });

  it('reports every failing member, the resource_id rule included, even beside a type error', () => {
    const fields = parseUploadMetadata({ resource: 'application', resource_id: 'dsp_1', description: 5, x: 1 }).issues.map((issue) => issue.field);
    expect(fields.sort()).toEqual(['description', 'resource_id', 'x']);
    expect(parseUploadMetadata({ resource: 'dispute', resource_id: `dsp_${'x'.repeat(23)}` }).issues).toEqual([{ field: 'resource_id', message: 'must be at most 26 characters' }]);
    expect(parseUploadMetadata([]).issues.length).toBeGreaterThan(0);
  });

  it('requires file_name on a session and knows no other members', () => {
    expect(sessionIssues({ resource: 'application', resource_id: 'app_1' })).toEqual([{ field: 'file_name', message: 'is required' }]);
    expect(sessionIssues({ resource: 'application', resource_id: 'app_1', file_name: 'a.png', size: 1 })).toEqual([{ field: 'size', message: 'is not a recognized member' }]);
  });

  it('names every failing member of a session at once, in one order: members, unknown members, resource_id, then the file name', () => {
    expect(sessionIssues({ resource: 'dispute', resource_id: 'app_1', description: 5, file_name: 'dir/a.wav\u0000', x: 1 })).toEqual([
      { field: 'description', message: 'must be a string' },
      { field: 'x', message: 'is not a recognized member' },
      { field: 'resource_id', message: 'must be dsp_ followed by letters, digits, _ or - for resource dispute' },
      { field: 'file_name', message: 'must not contain control characters' },
    ]);
    expect(sessionIssues({ resource: 'application', resource_id: 'app_1', file_name: 'call.wav' }).map((issue) => issue.field)).toEqual(['file_name']);
  });

  it('parses a session into the name it stores: the path stripped', () => {
    expect(parseUploadSessionRequest({ resource: 'application', resource_id: 'app_1', file_name: 'C:\\scans\\a.png' })).toEqual({ resource: 'application', resource_id: 'app_1', file_name: 'a.png' });
  });
});

describe('file names', () => {
  it.each([
    ['C:\\Users\\pat\\scan.png', 'scan.png'],
    ['/home/pat/scan.png', 'scan.png'],
    ['mixed/dir\\scan.png', 'scan.png'],
    ['scan.png', 'scan.png'],
  ])('strips the path of %s', (raw, name) => {
    expect(normalizeFileName(raw, 'file')).toEqual({ name, issues: [] });
  });

  it('counts code points and refuses empty, control characters and undecodable bytes', () => {
    expect(normalizeFileName(`${'😀'.repeat(251)}.txt`, 'file').issues).toEqual([]);
    expect(normalizeFileName(`${'😀'.repeat(252)}.txt`, 'file').issues).toEqual([{ field: 'file', message: 'name must be at most 255 characters' }]);
    expect(normalizeFileName('dir/', 'file').issues).toEqual([{ field: 'file', message: 'name must not be empty' }]);
    expect(normalizeFileName('..', 'file').issues).toEqual([{ field: 'file', message: 'name must not be empty' }]);
    expect(normalizeFileName('a\nb.txt', 'file').issues[0]?.message).toMatch(/control characters/);
    expect(normalizeFileName('a\uFFFD.txt', 'file').issues[0]?.message).toMatch(/UTF-8/);
    for (const control of ['\u0000', '\u001f', '\u007f', '\u0080', '\u0085', '\u009f']) {
      expect(normalizeFileName(`a${control}b.txt`, 'file').issues, JSON.stringify(control)).toEqual([{ field: 'file', message: 'name must not contain control characters' }]);
    }
    expect(normalizeFileName('a\u00a0b.txt', 'file').issues).toEqual([]);
  });

  it("names the rule without repeating the field's own word when the field is the name", () => {
    expect(normalizeFileName('', 'file_name').issues).toEqual([{ field: 'file_name', message: 'must not be empty' }]);
    expect(normalizeFileName(`${'x'.repeat(256)}.txt`, 'file_name').issues).toEqual([{ field: 'file_name', message: 'must be at most 255 characters' }]);
  });
});
