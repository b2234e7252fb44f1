import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agreementIdFor, CLIENTS_PATH, startPaypalStandin, type PaypalStandin } from '#local/paypal-standin.ts';

const BASIC = `Basic ${Buffer.from('local-client:local-secret').toString('base64')}`;

describe('PayPal stand-in', () => {
  let paypal: PaypalStandin;

  beforeAll(async () => {
    paypal = await startPaypalStandin();
  });

  afterAll(async () => {
    await paypal?.close();
  });

  const requestToken = (authorization?: string, body = 'grant_type=client_credentials') =>
    fetch(`${paypal.url}/v1/oauth2/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...(authorization ? { Authorization: authorization } : {}) },
      body,
    });

  async function accessToken(): Promise<string> {
    const response = await requestToken(BASIC);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { access_token: string };
    return body.access_token;
  }

  const createAgreement = (token: string | undefined, body: unknown) =>
    fetch(`${paypal.url}/v1/billing-agreements/agreements`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('exchanges client credentials for a bearer token', async () => {
    const response = await requestToken(BASIC);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 32400 });
    expect(typeof body.access_token).toBe('string');
    expect((body.access_token as string).length).toBeGreaterThan(20);
  });

  it('refuses the token exchange without Basic auth or with another grant type', async () => {
    const anonymous = await requestToken();
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toEqual(expect.objectContaining({ error: 'invalid_client' }));

    const bearer = await requestToken('Bearer something');
    expect(bearer.status).toBe(401);

    const wrongGrant = await requestToken(BASIC, 'grant_type=password');
    expect(wrongGrant.status).toBe(400);
    expect(await wrongGrant.json()).toMatchObject({ error: 'unsupported_grant_type' });
  });

  it('turns a BA token into a stable agreement id', async () => {
    const token = await accessToken();
    const first = await createAgreement(token, { token_id: 'BA-8A802366G0648845U' });
    expect(first.status).toBe(201);
    const firstBody = (await first.json()) as { id: string; state: string };
    expect(firstBody.state).toBe('ACTIVE');
    expect(firstBody.id).toMatch(/^B-[A-Z0-9]{17}$/);

    // A fresh access token and a second call must not change the id.
    const second = await createAgreement(await accessToken(), { token_id: 'BA-8A802366G0648845U' });
    expect(second.status).toBe(201);
    expect(((await second.json()) as { id: string }).id).toBe(firstBody.id);
    expect(agreementIdFor('BA-8A802366G0648845U')).toBe(firstBody.id);

    const other = await createAgreement(token, { token_id: 'BA-8A802366G0648845V' });
    expect(((await other.json()) as { id: string }).id).not.toBe(firstBody.id);
  });

  it('refuses malformed BA tokens in PayPal error shape', async () => {
    const token = await accessToken();
    const bad: unknown[] = [
      { token_id: 'BA-SHORT' },
      { token_id: 'BA-8A802366G0648845UX' },
      { token_id: 'EC-8A802366G0648845U' },
      { token_id: 'BA-8A802366G0648845!' },
      { token_id: 12345 },
      {},
      [],
    ];
    for (const body of bad) {
      const response = await createAgreement(token, body);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ name: 'INVALID_REQUEST', message: expect.any(String) });
    }
    const malformed = await createAgreement(token, '{oops');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ name: expect.any(String), message: expect.any(String) });
  });

  it('requires an issued bearer token for agreements', async () => {
    const missing = await createAgreement(undefined, { token_id: 'BA-8A802366G0648845U' });
    expect(missing.status).toBe(401);
    const unknown = await createAgreement('A21AAnot-issued-here', { token_id: 'BA-8A802366G0648845U' });
    expect(unknown.status).toBe(401);
    expect(await unknown.json()).toMatchObject({ error: 'invalid_token' });

    const basic = await fetch(`${paypal.url}/v1/billing-agreements/agreements`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: BASIC },
      body: JSON.stringify({ token_id: 'BA-8A802366G0648845U' }),
    });
    expect(basic.status).toBe(401);
  });

  it('tells which client ids it issued access tokens to', async () => {
    const counted = async () => (await (await fetch(`${paypal.url}${CLIENTS_PATH}`)).json()) as Record<string, number>;
    const before = await counted();
    await accessToken();
    await requestToken(`Basic ${Buffer.from('AXother:EKother').toString('base64')}`);
    await requestToken(); // refused: counted for no one
    expect(await counted()).toEqual({ ...before, 'local-client': (before['local-client'] ?? 0) + 1, AXother: 1 });
  });

  it('answers unknown routes with 404', async () => {
    const response = await fetch(`${paypal.url}/v1/payments/payment`);
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ name: 'RESOURCE_NOT_FOUND' });
  });
});
