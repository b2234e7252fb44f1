import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '#shared/platform/routes.ts';
import { jpeg, txt } from '../fixtures/documents.ts';
import type { ApiAnswer, Identity } from '../support/api.ts';
import { baseUrl, call } from '../support/api.ts';
import type { RuntimeStores } from '../support/documents.ts';
import { documentsPath, runtimeStores, scanned, upload } from '../support/documents.ts';
import { CARD, ECHECK, PAYPAL, customerPath, locationPath, unique } from '../support/paymethods.ts';

/** The paymethod sub-collections: named by the spec and the contract, served by other services of the same API. */
const SUB_COLLECTIONS = ['transactions', 'settlements', 'schedules'] as const;

interface ReturnedLink {
  /** Where the answer carried it: `Location`, `links.self`, `results[0].links.transactions`, ... */
  member: string;
  url: string;
  /** The `links` object it came from, to check sub-collection links against their `self`. */
  siblings?: Record<string, string>;
}

/** Every URL an answer hands out: its Location header and each member of every `links` object in the body. */
function linksIn(answer: ApiAnswer): ReturnedLink[] {
  const found: ReturnedLink[] = [];
  const location = answer.headers.get('location');
  if (location) found.push({ member: 'Location', url: location });
  const visit = (value: unknown, at: string): void => {
    if (Array.isArray(value)) value.forEach((item, index) => visit(item, `${at}[${index}]`));
    else if (value && typeof value === 'object') {
      for (const [name, member] of Object.entries(value)) {
        const path = at ? `${at}.${name}` : name;
        if (name === 'links') {
          for (const [linkName, url] of Object.entries(member as Record<string, string>)) found.push({ member: `${path}.${linkName}`, url, siblings: member as Record<string, string> });
        } else visit(member, path);
      }
    }
  };
  visit(answer.body, '');
  return found;
}

/** The GET route of the table that answers a path, if any (a trailing slash is accepted on every route). */
function getRouteFor(path: string): string | undefined {
  const matching = routes.filter((route) => route.method === 'GET' && new RegExp(`^${route.path.replace(/\{\w+\}/g, '[^/]+')}/?$`).test(path));
  expect(matching.length, path).toBeLessThanOrEqual(1);
  return matching[0]?.handler;
}

describe('every link the service returns', () => {
  let stores: RuntimeStores;
  let as: Identity;
  /** Each answer that hands out links, by the operation that gave it. */
  const answers: Array<[string, ApiAnswer]> = [];
  const send = async (operation: string, path: string, options: { method?: string; body?: unknown } = {}) => {
    const answer = await call(path, { as, ...options });
    expect(answer.status, `${operation}: ${answer.text}`).toBeLessThan(300);
    answers.push([operation, answer]);
    return answer;
  };

  beforeAll(async () => {
    stores = runtimeStores();
    // An organization of its own, so every list has exactly what this test made (and a second page).
    as = await stores.freshOrganization();
    const org = as.organizationId;
    const loc = unique('loc_');
    const cst = unique('cst_');
    const post = (operation: string, path: string, body: unknown) => send(operation, path, { method: 'POST', body });

    const card = await post('paymethods-create-customer', customerPath(org, loc, cst), { card: CARD });
    await post('paymethods-create-location', `${locationPath(org, loc)}/paymethods`, { echeck: ECHECK, customer_token: cst });
    await post('paymethods-create-location', `${locationPath(org, loc)}/paymethods`, { vendor: PAYPAL });
    const locationless = await post('paymethods-create-locationless', `/v3/customers/${unique('cst_')}/paymethods`, { organization_id: org, card: CARD });
    await post('onetimetokens-create', `${locationPath(org, loc)}/onetimetokens`, { echeck: ECHECK });

    const paymethod = `${locationPath(org, loc)}/paymethods/${card.body.paymethod_token as string}`;
    await send('paymethods-get', paymethod);
    await send('paymethods-update', paymethod, { method: 'PUT', body: { label: 'Renamed' } });
    await send('paymethods-get-organization', `/v3/organizations/${org}/paymethods/${locationless.body.paymethod_token as string}`);
    await send('paymethods-list-customer', `${customerPath(org, loc, cst)}?page_size=1`);
    await send('paymethods-list-location', `${locationPath(org, loc)}/paymethods?page_size=1`);
    await send('paymethods-list-organization', `/v3/organizations/${org}/paymethods?page_size=1&paymethod_type=card`);

    const receipt = await upload(as, { resource: 'application', resource_id: unique('app_'), description: 'receipt' }, { name: 'receipt.jpg', contentType: 'image/jpeg', bytes: jpeg });
    expect(receipt.status, receipt.text).toBe(201);
    answers.push(['documents-create', receipt]);
    const note = await upload(as, { resource: 'application', resource_id: unique('app_') }, { name: 'note.txt', contentType: 'text/plain', bytes: txt });
    expect(note.status, note.text).toBe(201);
    await post('documents-create-upload', documentsPath(org, 'uploads'), { resource: 'dispute', resource_id: unique('dsp_'), file_name: 'call.wav' });
    await send('documents-get', documentsPath(org, receipt.body.document_id as string));
    await send('documents-list', `${documentsPath(org)}?page_size=1`);
  }, 120_000);

  afterAll(() => stores?.destroy());

  it('self, next and Location lead to a GET route of this service that answers 200', async () => {
    const answered: string[] = [];
    for (const [operation, answer] of answers) {
      for (const link of linksIn(answer).filter((candidate) => !SUB_COLLECTIONS.some((name) => candidate.member.endsWith(`.${name}`)))) {
        const context = `${operation} ${link.member} ${link.url}`;
        expect(link.url.startsWith(`${baseUrl()}/v3/`), context).toBe(true);
        const path = link.url.slice(baseUrl().length);
        const handler = getRouteFor(new URL(link.url).pathname);
        expect(handler, `${context}: no GET route serves it`).toBeDefined();
        const followed = await call(path, { as });
        expect(followed.status, `${context} -> ${followed.status} ${followed.text}`).toBe(200);
        // A record's address reads back the same record: its own links.self is the link followed.
        if (!link.member.endsWith('.next') && !(followed.body.results && link.member === 'links.self')) {
          expect((followed.body.links as { self: string }).self, context).toBe(link.url.replace(/\?.*$/, ''));
        }
        answered.push(`${operation} ${link.member.replace(/\[\d+\]/g, '[]')} -> ${handler as string}`);
      }
    }
    // Every kind of answer handed out links, and the ones that matter most were among them.
    expect(new Set(answers.map(([operation]) => operation)).size).toBe(14);
    expect(answered).toEqual(
      expect.arrayContaining([
        'paymethods-create-customer Location -> paymethods-get',
        'paymethods-create-locationless links.self -> paymethods-get-organization',
        'onetimetokens-create Location -> onetimetokens-get',
        'onetimetokens-create links.self -> onetimetokens-get',
        'documents-create Location -> documents-get',
        'documents-create-upload links.self -> documents-get',
        'paymethods-list-organization links.next -> paymethods-list-organization',
        'documents-list links.next -> documents-list',
      ]),
    );
  });

  it("a paymethod's transactions, settlements and schedules are its own path plus the sub-collection, which no route of this service claims", () => {
    let seen = 0;
    for (const [operation, answer] of answers) {
      for (const link of linksIn(answer).filter((candidate) => SUB_COLLECTIONS.some((name) => candidate.member.endsWith(`.${name}`)))) {
        const name = link.member.split('.').pop() as string;
        expect(link.url, `${operation} ${link.member}`).toBe(`${link.siblings?.self}/${name}`);
        expect(getRouteFor(new URL(link.url).pathname), link.url).toBeUndefined();
        seen += 1;
      }
    }
    expect(seen).toBeGreaterThanOrEqual(3 * 10);
  });

  it("a document download's Location is the stored file", async () => {
    const stored = answers.find(([operation]) => operation === 'documents-get')?.[1] as ApiAnswer;
    await scanned(as, stored.body.document_id as string);
    const download = await call(documentsPath(as.organizationId, stored.body.document_id as string, 'file'), { as });
    expect(download.status, download.text).toBe(302);
    const file = await fetch(download.headers.get('location') as string);
    expect(file.status).toBe(200);
    expect(Buffer.from(await file.arrayBuffer())).toEqual(jpeg);
  });
});
