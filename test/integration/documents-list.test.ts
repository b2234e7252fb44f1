import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AvailableDocument } from '#shared/domain/documents/document.ts';
import { newToken } from '#shared/domain/ids.ts';
import { DynamoDocumentRepository } from '#shared/store/documents.ts';
import { png } from '../fixtures/documents.ts';
import { PARTNER, call } from '../support/api.ts';
import type { Identity } from '../support/api.ts';
import { documentsPath, runtimeStores, upload } from '../support/documents.ts';
import type { RuntimeStores } from '../support/documents.ts';

interface ListBody {
  number_results: number;
  search_criteria: { page_size: number; page_index: number; home_organization_id: string; resource_specific: Record<string, string> };
  results: Array<Record<string, unknown>>;
  response: { environment: string; response_desc: string };
  links: { self: string; next?: string };
}

/** Fixed history, oldest first: [received_at, type, resource]. */
const HISTORY: Array<[string, AvailableDocument['type'], AvailableDocument['resource']]> = [
  ['2024-03-09T12:00:00.000Z', 'png', 'application'],
  ['2024-03-10T00:00:00.000Z', 'jpeg', 'application'],
  ['2024-03-10T12:30:00.000Z', 'png', 'dispute'],
  ['2024-03-10T23:59:59.500Z', 'txt', 'bankaccount'],
  ['2024-03-11T00:00:00.000Z', 'png', 'application'],
  ['2024-03-12T08:00:00.000Z', 'wav', 'dispute'],
  ['2024-03-13T08:00:00.000Z', 'png', 'dispute'],
];

describe('documents: list', () => {
  let stores: RuntimeStores;
  let merchant: Identity;
  /** Document ids, newest first. */
  let newestFirst: string[];

  const list = async (query = '', as: Identity = merchant) => {
    const answer = await call<ListBody>(`${documentsPath(merchant.organizationId)}${query}`, { as });
    return answer;
  };
  const ids = (body: ListBody) => body.results.map((result) => result.document_id as string);
  const expected = (predicate: (entry: (typeof HISTORY)[number]) => boolean) =>
    HISTORY.map((entry, index) => ({ entry, id: [...newestFirst].reverse()[index] as string }))
      .filter(({ entry }) => predicate(entry))
      .map(({ id }) => id)
      .reverse();

  beforeAll(async () => {
    stores = runtimeStores();
    merchant = await stores.freshOrganization(PARTNER.organizationId);
    const repository = new DynamoDocumentRepository(stores.documentClient, stores.tableName);
    const created: string[] = [];
    for (const [receivedAt, type, resource] of HISTORY) {
      const documentId = newToken('doc_');
      created.push(documentId);
      await repository.put({
        document_id: documentId,
        organization_id: merchant.organizationId,
        resource,
        resource_id: `${{ application: 'app_', dispute: 'dsp_', bankaccount: 'bac_' }[resource]}1`,
        description: `${type} of ${receivedAt}`,
        file: `f.${type}`,
        status: 'available',
        type,
        size: 100,
        received_at: receivedAt,
        object_key: `documents/${merchant.organizationId}/${documentId}`,
        created_at: receivedAt,
      });
    }
    newestFirst = created.reverse();
  });
  afterAll(() => stores?.destroy());

  it('lists everything newest first in the list envelope', async () => {
    const answer = await list();
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      number_results: HISTORY.length,
      search_criteria: { page_size: 50, page_index: 0, home_organization_id: merchant.organizationId, resource_specific: {} },
      response: { environment: 'local', response_desc: 'Get Successful.' },
    });
    expect(ids(answer.body)).toEqual(newestFirst);
    expect(answer.body.links.self).toMatch(new RegExp(`/v3/organizations/${merchant.organizationId}/documents$`));
    expect(answer.body.links).not.toHaveProperty('next');
    expect(answer.body.results[0]).toEqual({
      document_id: newestFirst[0],
      resource: 'dispute',
      resource_id: 'dsp_1',
      type: 'png',
      description: 'png of 2024-03-13T08:00:00.000Z',
      size: 100,
      received_date: '2024-03-13',
      // Stored without a scan status, as documents stored before the scan gate are: pending until scanned.
      scan_status: 'pending',
      legal_hold: false,
    });
  });

  it('echoes the partner as home organization when it reads a merchant list', async () => {
    const answer = await list('', PARTNER);
    expect(answer.status).toBe(200);
    expect(answer.body.search_criteria.home_organization_id).toBe(PARTNER.organizationId);
  });

  it.each([
    ['a filter expression', "?filter=start_received_date eq '2024-03-10' and end_received_date eq '2024-03-10'"],
    ['plain parameters', '?start_received_date=2024-03-10&end_received_date=2024-03-10'],
    ['upper-case keywords and unquoted values', '?filter=start_received_date EQ 2024-03-10 AND end_received_date Eq 2024-03-10'],
  ])('filters a whole day, time aware, with %s', async (_label, query) => {
    const answer = await list(query.replace(/ /g, '%20'));
    expect(answer.status, answer.text).toBe(200);
    expect(ids(answer.body)).toEqual(expected(([at]) => at.startsWith('2024-03-10')));
    expect(answer.body.search_criteria.resource_specific).toEqual({ start_received_date: '2024-03-10T00:00:00', end_received_date: '2024-03-10T23:59:59' });
  });

  it('takes date-times to the second', async () => {
    const answer = await list(`?filter=${encodeURIComponent("start_received_date eq '2024-03-10T12:30:00' and end_received_date eq '2024-03-11T00:00:00'")}`);
    expect(ids(answer.body)).toEqual(expected(([at]) => at >= '2024-03-10T12:30:00' && at < '2024-03-11T00:00:01'));
    expect(answer.body.search_criteria.resource_specific).toEqual({ start_received_date: '2024-03-10T12:30:00', end_received_date: '2024-03-11T00:00:00' });
  });

  it.each([
    ['type', "type eq 'png'", ([, type]: (typeof HISTORY)[number]) => type === 'png'],
    ['resource', 'resource eq dispute', ([, , resource]: (typeof HISTORY)[number]) => resource === 'dispute'],
    ['type and resource', "type eq 'PNG' and resource eq 'dispute'", ([, type, resource]: (typeof HISTORY)[number]) => type === 'png' && resource === 'dispute'],
    [
      'type, resource and dates',
      "type eq png and resource eq application and start_received_date eq '2024-03-10'",
      ([at, type, resource]: (typeof HISTORY)[number]) => type === 'png' && resource === 'application' && at >= '2024-03-10',
    ],
  ])('filters by %s', async (_label, expression, predicate) => {
    const answer = await list(`?filter=${encodeURIComponent(expression)}`);
    expect(answer.status, answer.text).toBe(200);
    expect(ids(answer.body)).toEqual(expected(predicate));
  });

  it('pages with links.next (page_index and a cursor) until the end', async () => {
    const seen: string[] = [];
    let next: string | undefined = `${documentsPath(merchant.organizationId)}?filter=${encodeURIComponent("type eq 'png'")}&page_size=2`;
    const pageIndexes: number[] = [];
    while (next) {
      const answer: Awaited<ReturnType<typeof list>> = await call<ListBody>(next.replace(/^https?:\/\/[^/]+/, ''), { as: merchant });
      expect(answer.status, answer.text).toBe(200);
      expect(answer.body.search_criteria.page_size).toBe(2);
      pageIndexes.push(answer.body.search_criteria.page_index);
      seen.push(...ids(answer.body));
      next = answer.body.links.next;
      if (next) expect(new URL(next).searchParams.get('page_index')).toBe(String(answer.body.search_criteria.page_index + 1));
    }
    expect(seen).toEqual(expected(([, type]) => type === 'png'));
    expect(pageIndexes).toEqual([0, 1]);
  });

  it('serves a bare page_index without a cursor, and an empty page past the end', async () => {
    const second = await list('?page_size=3&page_index=1');
    expect(ids(second.body)).toEqual(newestFirst.slice(3, 6));
    expect(second.body.links.next).toMatch(/page_index=2/);
    const last = await list('?page_size=3&page_index=2');
    expect(ids(last.body)).toEqual(newestFirst.slice(6));
    expect(last.body.links).not.toHaveProperty('next');
    const past = await list('?page_size=3&page_index=5');
    expect(past.status).toBe(200);
    expect(past.body).toMatchObject({ number_results: 0, results: [] });
    expect(past.body.links).not.toHaveProperty('next');
  });

  it('refuses a cursor used with other filters or another page', async () => {
    const first = await list('?page_size=2');
    const cursor = new URL(first.body.links.next as string).searchParams.get('cursor') as string;
    expect((await list(`?page_size=2&page_index=1&type=png&cursor=${cursor}`)).status).toBe(400);
    expect((await list(`?page_size=2&page_index=2&cursor=${cursor}`)).status).toBe(400);
    expect((await list(`?page_size=2&page_index=1&cursor=${cursor.slice(0, -4)}`)).status).toBe(400);
    const stranger = await stores.freshOrganization();
    const foreign = await call(`${documentsPath(stranger.organizationId)}?page_size=2&page_index=1&cursor=${cursor}`, { as: stranger });
    expect(foreign.status).toBe(400);
  });

  it.each([
    ['an unknown filter name', `?filter=${encodeURIComponent("color eq 'red'")}`, 'filter'],
    ['a repeated filter name', `?filter=${encodeURIComponent("type eq png and type eq jpeg")}`, 'type'],
    ['a name given as parameter and in the expression', `?type=png&filter=${encodeURIComponent("type eq 'png'")}`, 'type'],
    ['an unterminated quote', `?filter=${encodeURIComponent("type eq 'png")}`, 'filter'],
    ['a missing operator', `?filter=${encodeURIComponent("type 'png'")}`, 'filter'],
    ['another operator', `?filter=${encodeURIComponent("type ne 'png'")}`, 'filter'],
    ['a dangling and', `?filter=${encodeURIComponent("type eq 'png' and")}`, 'filter'],
    ['an impossible date', `?filter=${encodeURIComponent("start_received_date eq '2024-02-30'")}`, 'start_received_date'],
    ['a malformed date', '?start_received_date=03/10/2024', 'start_received_date'],
    ['a date-time with a zone', '?end_received_date=2024-03-10T10:00:00Z', 'end_received_date'],
    ['an end before the start', '?start_received_date=2024-03-11&end_received_date=2024-03-10', 'end_received_date'],
    ['an unknown type', '?type=gif', 'type'],
    ['an unknown resource', '?resource=invoice', 'resource'],
    ['an unknown query parameter', '?sort=asc', 'sort'],
    ['a repeated parameter', '?page_size=2&page_size=3', 'page_size'],
    ['page_size 0', '?page_size=0', 'page_size'],
    ['page_size 1001', '?page_size=1001', 'page_size'],
    ['page_size not a number', '?page_size=ten', 'page_size'],
    ['a negative page_index', '?page_index=-1', 'page_index'],
  ])('answers 400 for %s', async (_label, query, field) => {
    const answer = await list(query);
    expect(answer.status, answer.text).toBe(400);
    expect(answer.body).toMatchObject({ response: { response_code: 'INVALID_QUERY' } });
    expect((answer.body as unknown as { response: { errors: Array<{ field: string }> } }).response.errors.map((error) => error.field)).toContain(field);
  });

  it('accepts page_size 1 and 1000, and a trailing slash with a filter', async () => {
    expect((await list('?page_size=1')).body.results).toHaveLength(1);
    expect((await list('?page_size=1000')).body.search_criteria.page_size).toBe(1000);
    const slashed = await call<ListBody>(`${documentsPath(merchant.organizationId)}/?filter=${encodeURIComponent("type eq 'wav'")}`, { as: merchant });
    expect(slashed.status).toBe(200);
    expect(slashed.body.results).toHaveLength(1);
  });

  it('leaves pending and rejected upload sessions out', async () => {
    const org = await stores.freshOrganization();
    const session = await call(`${documentsPath(org.organizationId)}/uploads`, {
      method: 'POST',
      as: org,
      body: { resource: 'application', resource_id: 'app_1', file_name: 'later.png' },
    });
    expect(session.status).toBe(201);
    await upload(org, { resource: 'application', resource_id: 'app_1' }, { name: 'now.png', contentType: 'image/png', bytes: png });
    const answer = await call<ListBody>(documentsPath(org.organizationId), { as: org });
    expect(answer.body.results.map((result) => result.document_id)).not.toContain(session.body.document_id);
    expect(answer.body.number_results).toBe(1);
  });
});
