import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BOUNDARY, bmp, jpeg, mp3WithId3, png, txt, wav } from '../fixtures/documents.ts';
import type { Part } from '../fixtures/documents.ts';
import { call } from '../support/api.ts';
import type { ApiAnswer, Identity } from '../support/api.ts';
import { documentsPath, postParts, runtimeStores, upload } from '../support/documents.ts';
import type { RuntimeStores } from '../support/documents.ts';

const metadata = { resource: 'application', resource_id: 'app_1', description: 'receipt' };
const json = (body: unknown = metadata): Part => ({ name: 'data', contentType: 'application/json', body: typeof body === 'string' ? body : JSON.stringify(body) });
const file = (bytes: Buffer = png, filename = 'a.png', contentType = 'image/png'): Part => ({ name: 'file', filename, contentType, body: bytes });

interface ErrorBody {
  response: { environment: string; response_code: string; response_desc: string; errors: Array<{ field?: string; message: string }> };
}

function expectError(answer: ApiAnswer, status: number, code: string, fields: string[] = []): ErrorBody['response'] {
  expect(answer.status, answer.text).toBe(status);
  const response = (answer.body as unknown as ErrorBody).response;
  expect(response.environment).toBe('local');
  expect(response.response_code).toBe(code);
  expect(response.response_desc).toMatch(/^Error\[1\]: /);
  expect(response.errors.length).toBeGreaterThan(0);
  for (const field of fields) expect(response.errors.map((error) => error.field)).toContain(field);
  expect(answer.headers.get('x-request-id')).toBeTruthy();
  return response;
}

describe('documents: bad uploads leave nothing behind', () => {
  let stores: RuntimeStores;
  let org: Identity;

  beforeAll(async () => {
    stores = runtimeStores();
    org = await stores.freshOrganization();
  });
  afterEach(async () => {
    expect(await stores.objectKeys(org.organizationId)).toEqual([]);
    expect(await stores.documentItems(org.organizationId)).toEqual([]);
  });
  afterAll(() => stores?.destroy());

  describe('metadata', () => {
    it.each([
      ['missing resource', { resource_id: 'app_1' }, ['resource']],
      ['unknown resource', { resource: 'invoice', resource_id: 'app_1' }, ['resource']],
      ['null resource (treated as absent)', { resource: null, resource_id: 'app_1' }, ['resource']],
      ['missing resource_id', { resource: 'application' }, ['resource_id']],
      ['resource_id of another resource', { resource: 'application', resource_id: 'dsp_1' }, ['resource_id']],
      ['resource_id without its prefix', { resource: 'bankaccount', resource_id: '12345' }, ['resource_id']],
      ['resource_id longer than 26', { resource: 'dispute', resource_id: `dsp_${'x'.repeat(23)}` }, ['resource_id']],
      ['resource_id not a string', { resource: 'dispute', resource_id: 42 }, ['resource_id']],
      ['description of 513 characters', { ...metadata, description: 'é'.repeat(513) }, ['description']],
      ['description not a string', { ...metadata, description: ['a'] }, ['description']],
      ['unknown members', { ...metadata, resource_type: 'x', notes: 'y' }, ['resource_type', 'notes']],
    ])('%s: 400', async (_label, body, fields) => {
      expectError(await upload(org, body, { name: 'a.png', contentType: 'image/png', bytes: png }), 400, 'VALIDATION_ERROR', fields as string[]);
    });

    it('reports every failing member at once', async () => {
      const response = expectError(
        await upload(org, { resource: 'application', resource_id: 'bac_1', description: 'x'.repeat(600), extra: 1 }, { name: 'a.jpg', contentType: 'image/gif', bytes: png }),
        400,
        'VALIDATION_ERROR',
        ['resource_id', 'description', 'extra', 'file', 'file.content_type'],
      );
      expect(response.response_desc).toMatch(/Error\[1\]: .* Error\[2\]: .* Error\[3\]: .* Error\[4\]: .* Error\[5\]: /);
    });
  });

  describe('file content', () => {
    it.each([
      ['a PNG renamed .jpg', png, 'photo.jpg', 'image/jpeg'],
      ['a PNG declared image/jpeg', png, 'photo.png', 'image/jpeg'],
      ['a JPEG named .txt (leading bytes disagree with the extension)', Buffer.concat([jpeg, Buffer.from('\nplain text after the image\n')]), 'notes.txt', 'text/plain'],
      ['a polyglot: PNG signature, text body, .txt name', Buffer.concat([png.subarray(0, 8), Buffer.from('hello')]), 'notes.txt', 'application/octet-stream'],
      ['a BMP declared text/plain', bmp, 'scan.bmp', 'text/plain'],
      ['a GIF (type outside the list)', Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1'), 'anim.gif', 'image/gif'],
      ['a GIF renamed .png', Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1'), 'anim.png', 'image/png'],
      ['a PDF renamed .txt', Buffer.from('%PDF-1.7\n\x00\x01\x02binary', 'latin1'), 'statement.txt', 'text/plain'],
      ['text that is not UTF-8', Buffer.from([0x48, 0x69, 0xe9, 0x0a]), 'latin1.txt', 'text/plain'],
      ['text with a NUL byte', Buffer.from('abc\x00def', 'latin1'), 'nul.txt', 'text/plain'],
      ['a name without an allowed extension', png, 'photo', 'image/png'],
      ['a PNG with a .exe name', png, 'photo.exe', 'application/octet-stream'],
      ['a 0-byte file', Buffer.alloc(0), 'empty.txt', 'text/plain'],
      ['a WAV for an application', wav, 'poa.wav', 'audio/wav'],
      ['an MP3 for a bank account', mp3WithId3, 'poa.mp3', 'audio/mpeg'],
      ['a 256-character file name', txt, `${'n'.repeat(252)}.txt`, 'text/plain'],
      ['a file name that is a path only', txt, '/tmp/docs/', 'text/plain'],
    ])('%s: 400', async (label, bytes, name, contentType) => {
      const resource = label.includes('bank account') ? { resource: 'bankaccount', resource_id: 'bac_1' } : metadata;
      expectError(await upload(org, resource, { name, contentType, bytes }), 400, 'VALIDATION_ERROR', [label.includes('declared') ? 'file.content_type' : 'file']);
    });

    it('refuses a file name that is not UTF-8', async () => {
      const parts: Part[] = [json(), { name: 'file', rawFilename: Buffer.from([0x61, 0xff, 0xfe, 0x2e, 0x70, 0x6e, 0x67]), contentType: 'image/png', body: png }];
      expectError(await postParts(org, parts), 400, 'INVALID_MULTIPART', ['file']);
    });
  });

  describe('multipart structure', () => {
    it.each([
      ['a second file part', [json(), file(), file()]],
      ['the file part before the JSON part', [file(), json()]],
      ['a JSON part that is not JSON', [json('{"resource": "application",'), file()]],
      ['a JSON part that is an array', [json('[1, 2]'), file()]],
      ['a JSON part that is a string', [json('"application"'), file()]],
      ['a JSON part without Content-Type application/json', [{ name: 'data', body: JSON.stringify(metadata) }, file()]],
      ['two JSON parts', [json(), json(), file()]],
      ['no file part', [json()]],
      ['no JSON part', [file()]],
      ['a file part not named file', [json(), { ...file(), name: 'document' }]],
      ['a file part without a filename', [json(), { name: 'file', contentType: 'application/octet-stream', body: png }]],
      ['an empty body', []],
    ] as Array<[string, Part[]]>)('%s: 400', async (_label, parts) => {
      expectError(await postParts(org, parts), 400, 'INVALID_MULTIPART');
    });

    it('refuses a body cut off before the closing delimiter', async () => {
      expectError(await postParts(org, [json(), file()], { close: false }), 400, 'INVALID_MULTIPART');
    });

    it('refuses a body cut off in the middle of the file', async () => {
      const full = (await import('../fixtures/documents.ts')).multipartBody([json(), file(txt, 'a.txt', 'text/plain')], BOUNDARY);
      const answer = await call(documentsPath(org.organizationId), {
        method: 'POST',
        as: org,
        rawBody: full.subarray(0, full.length - 30),
        headers: { 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` },
      });
      expectError(answer, 400, 'INVALID_MULTIPART');
    });

    it.each([
      ['application/json', 'application/json'],
      ['text/plain', 'text/plain'],
      ['multipart/mixed', `multipart/mixed; boundary=${BOUNDARY}`],
    ])('refuses Content-Type %s with 415', async (_label, contentType) => {
      expectError(await postParts(org, [json(), file()], { contentType }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it.each([
      ['no boundary', 'multipart/form-data'],
      ['an empty boundary', 'multipart/form-data; boundary='],
      ['a 71-character boundary', `multipart/form-data; boundary=${'b'.repeat(71)}`],
      ['a boundary with a character RFC 2046 excludes', 'multipart/form-data; boundary=abc@def'],
      ['a boundary ending in a space', 'multipart/form-data; boundary="abc "'],
    ])('refuses %s with 400', async (_label, contentType) => {
      expectError(await postParts(org, [json(), file()], { contentType }), 400, 'INVALID_MULTIPART');
    });

    it('refuses a body whose delimiters do not match the declared boundary', async () => {
      expectError(await postParts(org, [json(), file()], { contentType: 'multipart/form-data; boundary=someotherboundary' }), 400, 'INVALID_MULTIPART');
    });
  });

  it('refuses 8,000,001 bytes in one request with 413 naming the upload-session route', async () => {
    const response = expectError(await upload(org, metadata, { name: 'big.txt', contentType: 'text/plain', bytes: Buffer.alloc(8_000_001, 0x61) }), 413, 'PAYLOAD_TOO_LARGE');
    expect(response.response_desc).toContain('/documents/uploads');
  });
});

describe('documents: edge values that are accepted', () => {
  let stores: RuntimeStores;
  let org: Identity;
  beforeAll(async () => {
    stores = runtimeStores();
    org = await stores.freshOrganization();
  });
  afterAll(() => stores?.destroy());

  it.each([
    ['a 1-character boundary', 'b'],
    ['a 70-character boundary', 'B'.repeat(70)],
    ['a boundary of every RFC 2046 character, quoted', "'()+_,-./:=?a1"],
  ])('accepts %s', async (_label, boundary) => {
    const quoted = /[()/:=?,]/.test(boundary) ? `"${boundary}"` : boundary;
    // A resource_id per boundary: the same file twice for one resource_id is a duplicate.
    const answer = await postParts(org, [json({ ...metadata, resource_id: `app_b${boundary.length}` }), file()], { boundary, contentType: `multipart/form-data; boundary=${quoted}` });
    expect(answer.status, answer.text).toBe(201);
  });

  it('accepts 512-code-point descriptions and 255-code-point names, counting code points', async () => {
    const name = `${'😀'.repeat(251)}.txt`;
    const answer = await upload(org, { ...metadata, description: '😀'.repeat(512) }, { name, contentType: 'text/plain', bytes: txt });
    expect(answer.status, answer.text).toBe(201);
    expect(answer.body.file).toBe(name);
  });

  it('accepts a JSON part with a filename, any part name, a null description, and octet-stream', async () => {
    const answer = await postParts(org, [
      { name: 'metadata', filename: 'meta.json', contentType: 'application/json', body: JSON.stringify({ ...metadata, description: null }) },
      { name: 'file', filename: 'a.bmp', contentType: 'application/octet-stream', body: bmp },
    ]);
    expect(answer.status, answer.text).toBe(201);
    expect(answer.body).toMatchObject({ type: 'bmp' });
    expect(answer.body).not.toHaveProperty('description');
  });
});
