import { describe, expect, it } from 'vitest';
import { baseUrl, MERCHANT } from '../support/api.ts';
import { unique } from '../support/paymethods.ts';

/**
 * Requests as Forte's published REST v3 examples send them (developers.forte.net,
 * "Paymethods" and "Documents"), run as an existing Forte client runs them:
 * plain fetch, Basic credentials, X-Forte-Auth-Organization-Id, path
 * parameters repeated in the body (with or without their prefix), card and
 * echeck members as strings where Forte's samples quote them, a document's
 * JSON part named myJsonString, filters written `name+eq+value`.
 */
const ORG = MERCHANT.organizationId;
const FORTE_HEADERS = {
  Authorization: `Basic ${Buffer.from(`${MERCHANT.accessId}:${MERCHANT.secureKey}`).toString('base64')}`,
  'X-Forte-Auth-Organization-Id': ORG,
  Accept: 'application/json',
};

async function forte(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${baseUrl()}/v3${path}`, {
    method,
    headers: { ...FORTE_HEADERS, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const errorFields = (answer: { body: Record<string, unknown> }) => ((answer.body.response as { errors?: Array<{ field: string }> }).errors ?? []).map((error) => error.field).sort();

describe("Forte's REST v3 examples, sent as a Forte client sends them", () => {
  const location = unique('loc_');
  const bareLocation = location.slice('loc_'.length);
  const customer = unique('cst_');
  const tokens: Record<string, string> = {};

  it('creates a card paymethod for a customer, the body repeating the path (organization without prefix, location and customer with)', async () => {
    const answer = await forte('POST', `/organizations/${ORG}/locations/${location}/customers/${customer}/paymethods`, {
      organization_id: ORG.slice('org_'.length),
      location_id: location,
      customer_token: customer,
      label: 'Visa - 1111',
      notes: 'Business card',
      card: { card_type: 'visa', name_on_card: 'John Smith', account_number: '4111111111111111', expire_month: '12', expire_year: '2030', card_verification_value: '123' },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(answer.body).toMatchObject({ location_id: location, customer_token: customer, label: 'Visa - 1111', card: { card_type: 'visa', last_4_account_number: '1111', masked_account_number: '****1111' } });
    tokens.card = answer.body.paymethod_token as string;
  });

  it('creates a clientless echeck paymethod at a location (a Canadian routing number), the body repeating the location without its prefix', async () => {
    const answer = await forte('POST', `/organizations/${ORG}/locations/${location}/paymethods`, {
      location_id: bareLocation,
      label: 'Checking',
      echeck: { account_holder: 'John Smith', account_number: '987654321012', routing_number: '000112345', account_type: 'checking', sec_code: 'WEB' },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(answer.body).toMatchObject({ location_id: location, echeck: { account_type: 'checking', sec_code: 'WEB', last_4_account_number: '1012' } });
    expect(answer.body.customer_token).toBeUndefined();
    tokens.echeck = answer.body.paymethod_token as string;
  });

  it('creates a PayPal paymethod from a billing-agreement token', async () => {
    const answer = await forte('POST', `/organizations/${ORG}/locations/${location}/customers/${customer}/paymethods`, {
      vendor: { vendor_type: 'paypal', vendor_billing_agreement_token: 'BA-8A802366G0648845U' },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect((answer.body.vendor as Record<string, unknown>).vendor_billing_agreement_id).toMatch(/^B-/);
  });

  it('answers 400 naming each repeated path parameter that differs from the path, and creates nothing', async () => {
    const answer = await forte('POST', `/organizations/${ORG}/locations/${location}/customers/${customer}/paymethods`, {
      organization_id: 'org_other',
      location_id: 'loc_other',
      customer_token: 'cst_other',
      card: { card_type: 'visa', name_on_card: 'John Smith', account_number: '4111111111111111', expire_month: 12, expire_year: 2030 },
    });
    expect(answer.status).toBe(400);
    expect(errorFields(answer)).toEqual(['customer_token', 'location_id', 'organization_id']);
    const list = await forte('GET', `/organizations/${ORG}/locations/${location}/customers/${customer}/paymethods`);
    expect(list.body.number_results).toBe(2);
  });

  it('updates a card (new expiry), the body repeating the organization and location, and reads it back', async () => {
    const path = `/organizations/${ORG}/locations/${location}/paymethods/${tokens.card}`;
    const updated = await forte('PUT', path, { organization_id: ORG, location_id: location, label: 'Visa - renewed', card: { expire_month: '6', expire_year: '2031' } });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body).toMatchObject({ label: 'Visa - renewed', card: { expire_month: 6, expire_year: 2031 } });
    const wrong = await forte('PUT', path, { location_id: 'loc_elsewhere', label: 'x' });
    expect(wrong.status).toBe(400);
    expect(errorFields(wrong)).toEqual(['location_id']);
    const read = await forte('GET', path);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ label: 'Visa - renewed', customer_token: customer });
  });

  it('lists with Forte filters: name+eq+value, and the Account Updater report range', async () => {
    const byCustomer = await forte('GET', `/organizations/${ORG}/locations/${location}/paymethods?filter=customer_token+eq+${customer}`);
    expect(byCustomer.status, JSON.stringify(byCustomer.body)).toBe(200);
    expect(byCustomer.body.number_results).toBe(2);
    const echecks = await forte('GET', `/organizations/${ORG}/locations/${location}/paymethods?filter=paymethod_type+eq+echeck`);
    expect((echecks.body.results as Array<{ paymethod_token: string }>).map((result) => result.paymethod_token)).toEqual([tokens.echeck]);
    const report = await forte('GET', `/organizations/${ORG}/paymethods?filter=start_au_updated_date+eq+2020-01-01+and+end_au_updated_date+eq+2020-01-31`);
    expect(report.status, JSON.stringify(report.body)).toBe(200);
    expect(report.body.number_results).toBe(0);
  });

  it('uploads a document as Forte\'s example does: a JSON part named myJsonString, then the file; the JSON part may repeat the organization', async () => {
    const form = new FormData();
    form.append('myJsonString', new Blob([JSON.stringify({ organization_id: ORG, resource: 'application', resource_id: 'app_109630', description: 'voided check' })], { type: 'application/json' }));
    form.append('file', new Blob(['Voided check 109630\n'], { type: 'text/plain' }), 'voided-check.txt');
    const response = await fetch(`${baseUrl()}/v3/organizations/${ORG}/documents`, { method: 'POST', headers: FORTE_HEADERS, body: form });
    const body = (await response.json()) as Record<string, unknown>;
    expect(response.status, JSON.stringify(body)).toBe(201);
    expect(body).toMatchObject({ resource: 'application', resource_id: 'app_109630', type: 'txt', file: 'voided-check.txt', description: 'voided check' });

    const other = new FormData();
    other.append('myJsonString', new Blob([JSON.stringify({ organization_id: 'org_300', resource: 'application', resource_id: 'app_109630' })], { type: 'application/json' }));
    other.append('file', new Blob(['x\n'], { type: 'text/plain' }), 'x.txt');
    const refused = await fetch(`${baseUrl()}/v3/organizations/${ORG}/documents`, { method: 'POST', headers: FORTE_HEADERS, body: other });
    expect(refused.status).toBe(400);
    expect(errorFields({ body: (await refused.json()) as Record<string, unknown> })).toEqual(['organization_id']);
  });

  it('deletes a paymethod at the location path', async () => {
    const deleted = await forte('DELETE', `/organizations/${ORG}/locations/${location}/paymethods/${tokens.echeck}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ paymethod_token: tokens.echeck, response: { response_desc: 'Delete Successful.' } });
  });
});
