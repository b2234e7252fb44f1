import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidRequest, UnsupportedMediaType } from '#shared/domain/errors.ts';
import { MAX_JSON_DEPTH, isSafeText, jsonDepthExceeds, mediaTypeOf, parseJsonObject } from '#shared/http/hostile-input.ts';
import { parseListQuery } from '#shared/http/list-query.ts';
import { parseMultipartUpload } from '#shared/http/multipart.ts';

/** Property runs: fixed seed so a failure reproduces; printed so a run can be repeated. */
const SEED = 20261124;
const RUNS = 200;
/** The machine running the tests may be busy: the runs are bounded, the clock is not asserted. */
const PROPERTY_TIMEOUT_MS = 60_000;
console.log(`hostile-input properties: seed ${SEED}, ${RUNS} runs each`);

function refusal(run: () => unknown): InvalidRequest {
  try {
    run();
  } catch (error) {
    if (error instanceof InvalidRequest) return error;
    throw error;
  }
  throw new Error('expected an InvalidRequest');
}

const nested = (depth: number, open = '{"a":', close = '}') => `${open.repeat(depth - 1)}{}${close.repeat(depth - 1)}`;

describe('JSON bodies: hostile shapes', () => {
  it.each(['__proto__', 'constructor', 'prototype'])('refuses a member named %s at any depth, naming it', (name) => {
    const top = refusal(() => parseJsonObject(`{"${name}": {"customer_token": "cst_X"}, "label": "x"}`, 'INVALID_JSON'));
    expect(top.issues).toEqual([{ field: name, message: 'is not an allowed member name' }]);
    const deep = refusal(() => parseJsonObject(`{"card": {"items": [{"${name}": {"account_number": "4111111111111111"}}]}}`, 'INVALID_JSON'));
    expect(deep.issues.map((issue) => issue.field)).toEqual([`card.items[0].${name}`]);
  });

  it('never lets a __proto__ member reach the result or its prototype', () => {
    // JSON.parse keeps "__proto__" as an own member; copying it naively with `result[name] =` would set the prototype.
    expect(() => parseJsonObject('{"__proto__": {"polluted": true}}', 'INVALID_JSON')).toThrow(InvalidRequest);
    const clean = parseJsonObject('{"a": {"b": 1}}', 'INVALID_JSON');
    expect(Object.getPrototypeOf(clean)).toBeNull();
    expect(Object.getPrototypeOf(clean.a)).toBeNull();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it(`accepts ${MAX_JSON_DEPTH} levels and refuses ${MAX_JSON_DEPTH + 1}, without recursion on deep input`, () => {
    expect(() => parseJsonObject(nested(MAX_JSON_DEPTH), 'INVALID_JSON')).not.toThrow();
    expect(refusal(() => parseJsonObject(nested(MAX_JSON_DEPTH + 1), 'INVALID_JSON')).code).toBe('INVALID_JSON');
    expect(refusal(() => parseJsonObject(`{"a":${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}}`, 'INVALID_JSON')).code).toBe('INVALID_JSON');
    // A million levels: the depth scan is one loop, so this is a 400, not a stack overflow.
    expect(refusal(() => parseJsonObject(`{"a":${'['.repeat(1_000_000)}`, 'INVALID_JSON')).code).toBe('INVALID_JSON');
    // Brackets inside strings are text.
    expect(() => parseJsonObject(`{"a": "${'{['.repeat(100)}\\"${'['.repeat(100)}"}`, 'INVALID_JSON')).not.toThrow();
  });

  it('refuses NUL and unpaired surrogates in text members, naming each', () => {
    const error = refusal(() => parseJsonObject('{"label": "a\\u0000b", "notes": "\\ud800", "card": {"name_on_card": "x\\udc00"}, "ok": "\\ud83d\\ude00"}', 'INVALID_JSON'));
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.issues.map((issue) => issue.field)).toEqual(['label', 'notes', 'card.name_on_card']);
  });

  it('refuses text that held bytes that were not UTF-8: decoded, they are U+FFFD', () => {
    // A surrogate's CESU-8 bytes, a lone 0xFF and a cut sequence, as the body's text arrives.
    const text = Buffer.concat([Buffer.from('{"label": "a'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('", "notes": "'), Buffer.from([0xff]), Buffer.from('", "customer_id": "x'), Buffer.from([0xc3]), Buffer.from('"}')]).toString('utf8');
    const error = refusal(() => parseJsonObject(text, 'INVALID_JSON'));
    expect(error.issues).toEqual(['label', 'notes', 'customer_id'].map((field) => ({ field, message: 'must not contain U+0000, U+FFFD (bytes that were not UTF-8) or unpaired UTF-16 surrogates' })));
  });

  it('bounds the number of issues listed', () => {
    const members = Array.from({ length: 500 }, (_value, index) => `"m${index}": "\\u0000"`).join(',');
    expect(refusal(() => parseJsonObject(`{${members}}`, 'INVALID_JSON')).issues).toHaveLength(51);
  });

  it('property: any JSON value either parses into a prototype-free copy or is a 400, never another error', () => {
    const names = fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'));
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ maxDepth: 4, withCrossShrink: true }, fc.string({ unit: 'binary', maxLength: 8 }), fc.double(), fc.boolean(), fc.constant(null), tie('array'), tie('object')),
      array: fc.array(tie('node'), { maxLength: 4 }),
      object: fc.dictionary(names, tie('node'), { maxKeys: 4 }),
    })).object;
    fc.assert(
      fc.property(value, (object) => {
        const text = JSON.stringify(object);
        try {
          const parsed = parseJsonObject(text, 'INVALID_JSON');
          expect(Object.getPrototypeOf(parsed)).toBeNull();
          expect(JSON.stringify(parsed)).not.toContain('"__proto__"');
        } catch (error) {
          expect(error).toBeInstanceOf(InvalidRequest);
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
  }, PROPERTY_TIMEOUT_MS);

  it('property: the depth scan agrees with the real nesting', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 80 }), fc.boolean(), (depth, arrays) => {
        const text = arrays ? `${'['.repeat(depth)}${']'.repeat(depth)}` : nested(depth);
        expect(jsonDepthExceeds(text, MAX_JSON_DEPTH)).toBe(depth > MAX_JSON_DEPTH);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  }, PROPERTY_TIMEOUT_MS);

  it('tells safe text from NUL and lone surrogates', () => {
    expect(isSafeText('plain \ud83d\ude00 text')).toBe(true);
    for (const bad of ['\u0000', 'a\ud800', '\udc00b', '\ude00\ud83d']) expect(isSafeText(bad)).toBe(false);
  });
});

describe('Content-Type charsets', () => {
  it('accepts utf-8 or no charset, and 415s any other', () => {
    expect(mediaTypeOf('application/json')).toBe('application/json');
    expect(mediaTypeOf('Application/JSON; charset=UTF-8')).toBe('application/json');
    expect(mediaTypeOf('application/json; charset="utf-8"')).toBe('application/json');
    for (const charset of ['utf-16', 'iso-8859-1', 'utf-16le', '']) expect(() => mediaTypeOf(`application/json; charset=${charset}`)).toThrow(UnsupportedMediaType);
  });

  it('refuses an upload part that declares another charset', async () => {
    const body = (jsonType: string, disposition = 'filename="a.txt"') =>
      Buffer.from(
        `--b\r\nContent-Disposition: form-data; name="data"\r\nContent-Type: ${jsonType}\r\n\r\n{"resource":"application"}\r\n` +
          `--b\r\nContent-Disposition: form-data; name="file"; ${disposition}\r\nContent-Type: text/plain\r\n\r\nhello\r\n--b--\r\n`,
      );
    const limits = { maxFileBytes: 1000, maxJsonBytes: 1000 };
    await expect(parseMultipartUpload('multipart/form-data; boundary=b', body('application/json'), limits)).resolves.toMatchObject({ metadata: { resource: 'application' } });
    await expect(parseMultipartUpload('multipart/form-data; boundary=b', body('application/json; charset=utf-16'), limits)).rejects.toBeInstanceOf(UnsupportedMediaType);
    expect(() => parseMultipartUpload('multipart/form-data; boundary=b; charset=iso-8859-1', body('application/json'), limits)).toThrow(UnsupportedMediaType);
    await expect(parseMultipartUpload('multipart/form-data; boundary=b', body('application/json', "filename*=iso-8859-1''a.txt"), limits)).rejects.toBeInstanceOf(UnsupportedMediaType);
  });
});

describe('query parameters and filter terms', () => {
  const spec = { filters: { type: { kind: 'enum', values: ['png', 'jpeg'] } } } as const;
  const queryOf = (entries: Array<[string, string]>) => {
    const query = Object.create(null) as Record<string, string[]>;
    for (const [name, value] of entries) (query[name] ??= []).push(value);
    return query;
  };

  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf', 'prototype'])('%s is an unknown parameter and an unknown filter term', (name) => {
    expect(refusal(() => parseListQuery(queryOf([[name, 'x']]), spec)).issues).toEqual([{ field: name, message: 'is not a recognized query parameter' }]);
    expect(refusal(() => parseListQuery(queryOf([['filter', `${name} eq 'x'`]]), spec)).issues[0]?.message).toMatch(/is not a recognized filter/);
  });

  it('property: any query is parsed or refused with a 400, never another error', () => {
    const name = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('constructor', 'toString', '__proto__', 'filter', 'type', 'page_size', 'page_index', 'cursor'));
    const value = fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom("type eq 'png'", "__proto__ eq 'x'", "type eq 'png' and constructor eq x", '1', '-1'));
    fc.assert(
      fc.property(fc.array(fc.tuple(name, value), { maxLength: 5 }), (entries) => {
        try {
          parseListQuery(queryOf(entries), spec);
        } catch (error) {
          expect(error).toBeInstanceOf(InvalidRequest);
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
  }, PROPERTY_TIMEOUT_MS);
});
