/**
 * Idempotency-Key records hold a keyed hash of the request (PCI DSS v4.0.1
 * 3.5.1.1) over its canonical form without the CVV (3.3.1.2): never the
 * body, a card number, a CVV or a plain SHA-256 someone could test guessed
 * bodies against.
 */
import { createHash } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { ApiAnswer } from '../support/api.ts';
import { call, MERCHANT, useRuntimeEnvironment } from '../support/api.ts';
import { CARD, CARD_NUMBER, customerPath, expectError, unique } from '../support/paymethods.ts';

const ORG = MERCHANT.organizationId;
const ROUTE = 'paymethods-create-customer';
const CVV = '7391';

async function table() {
  const environment = useRuntimeEnvironment();
  const { dynamo } = await import('#shared/aws/dynamodb.ts');
  const { keys } = await import('#shared/store/keys.ts');
  return { dynamo, keys, tableName: environment.TABLE_NAME! };
}

async function storedKey(key: string): Promise<Record<string, unknown>> {
  const { dynamo, keys, tableName } = await table();
  const { Item } = await dynamo.send(new GetCommand({ TableName: tableName, Key: keys.idempotency(ORG, key), ConsistentRead: true }));
  expect(Item, key).toBeDefined();
  return Item!;
}

/** Every string value anywhere in an item (the stored response is JSON text: its values too). */
function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') {
    try {
      const parsed: unknown = JSON.parse(value);
      if (parsed !== null && typeof parsed === 'object') return [value, ...stringsIn(parsed)];
    } catch {
      // not JSON: a plain string
    }
    return [value];
  }
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([name, member]) => [name, ...stringsIn(member)]);
  return [];
}

/** Plain SHA-256 forms a request could be stored under (route-prefixed raw and part-wise, and the bare body), in three encodings. */
function plainHashes(path: { organization_id: string; location_id: string; customer_token: string }, rawBody: string): string[] {
  const start = () => createHash('sha256').update(`${ROUTE}\n`).update(JSON.stringify(Object.entries(path).sort(([a], [b]) => a.localeCompare(b)))).update('\n');
  const digests = [start().update(rawBody), start().update(`${Buffer.byteLength(rawBody)}\n`).update(rawBody), createHash('sha256').update(rawBody)];
  return digests.flatMap((hash) => {
    const digest = hash.digest();
    return [digest.toString('base64url'), digest.toString('hex'), digest.toString('base64')];
  });
}

function send(path: string, rawBody: string, key: string): Promise<ApiAnswer> {
  return call(path, { method: 'POST', rawBody, headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key } });
}

describe('Idempotency-Key records', () => {
  it('store a keyed hash: no card number, no CVV, no plain SHA-256 of the body; another CVV replays, another body is 422', async () => {
    const loc = unique('loc_');
    const cst = unique('cst_');
    const path = customerPath(ORG, loc, cst);
    const key = unique('key-');
    const body = JSON.stringify({ card: { ...CARD, card_verification_value: CVV } });
    const first = await send(path, body, key);
    expect(first.status, first.text).toBe(201);

    const item = await storedKey(key);
    const strings = stringsIn(item);
    expect(strings.filter((value) => value.includes(CARD_NUMBER))).toEqual([]);
    expect(strings.filter((value) => value === CVV || value === 'card_verification_value')).toEqual([]);
    expect(item.fingerprint).toMatch(/^[A-Za-z0-9_-]{43}$/);
    for (const plain of plainHashes({ organization_id: ORG, location_id: loc, customer_token: cst }, body)) expect(strings).not.toContain(plain);

    // The same body with another CVV, or none, and its members in another order: the same request.
    const otherCvv = await send(path, JSON.stringify({ card: { ...CARD, card_verification_value: '012' } }), key);
    const noCvv = await send(path, JSON.stringify({ card: Object.fromEntries(Object.entries(CARD).filter(([name]) => name !== 'card_verification_value').reverse()) }), key);
    for (const again of [otherCvv, noCvv]) {
      expect(again.status, again.text).toBe(201);
      expect(again.body.paymethod_token).toBe(first.body.paymethod_token);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
    }
    expect((await call(path)).body.number_results).toBe(1);
    expectError(await send(path, JSON.stringify({ card: { ...CARD, name_on_card: 'Someone Else' } }), key), 422);
    expect((await storedKey(key)).fingerprint).toBe(item.fingerprint);
  });
});
