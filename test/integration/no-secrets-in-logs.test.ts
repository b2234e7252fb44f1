import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, inject, it } from 'vitest';
import { call, MERCHANT } from '../support/api.ts';
import { CARD, ECHECK, ECHECK_NUMBER, locationPath, OTHER_CARD_NUMBER, post, unique } from '../support/paymethods.ts';

const ORG = MERCHANT.organizationId;

/** The runtime's log is written by a pipe; wait until it holds the last request's access line. */
async function logUntil(requestId: string): Promise<string> {
  const file = inject('runtimeLog');
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const text = await readFile(file, 'utf8');
    if (text.includes(requestId)) return text;
    await new Promise((resolve) => setImmediate(resolve));
    await sleep(20);
  }
  throw new Error(`request ${requestId} never reached the runtime log`);
}

describe('no account number in any log line', () => {
  it('logs nothing secret through a full create, token, update, failure and delete run', async () => {
    const loc = unique('loc_');
    const card = await post(`${locationPath(ORG, loc)}/paymethods`, { card: { ...CARD, card_type: 'mast', account_number: OTHER_CARD_NUMBER, card_verification_value: '8642' } });
    expect(card.status).toBe(201);
    await post(`${locationPath(ORG, loc)}/paymethods`, { echeck: ECHECK });
    const ott = await post(`${locationPath(ORG, loc)}/onetimetokens`, { card: { ...CARD, card_type: 'mast', account_number: OTHER_CARD_NUMBER } });
    await post(`${locationPath(ORG, loc)}/paymethods`, { card: { one_time_token: ott.body.one_time_token } });
    await post(`${locationPath(ORG, loc)}/paymethods`, { card: { ...CARD, card_type: 'mast', account_number: OTHER_CARD_NUMBER, expire_year: 1999 } });
    await post(`${locationPath(ORG, loc)}/paymethods`, { card: { ...CARD, card_type: 'mast', account_number: `${OTHER_CARD_NUMBER}0` } });
    const path = `${locationPath(ORG, loc)}/paymethods/${card.body.paymethod_token}`;
    await call(path, { method: 'PUT', body: { card: { expire_month: 2, expire_year: 2033, card_verification_value: '8642' } } });
    await call(path, { method: 'PUT', body: { card: { account_number: OTHER_CARD_NUMBER } } });
    const last = await call(path, { method: 'DELETE' });
    const log = await logUntil(last.headers.get('x-request-id') as string);
    for (const secret of [OTHER_CARD_NUMBER, CARD.account_number, ECHECK_NUMBER, 'merchant-key']) expect(log).not.toContain(secret);
    // A 4-digit CVV may occur by chance inside ids and timestamps, so look for it as a member value.
    expect(log).not.toMatch(/card_verification_value\W+(?!\[REDACTED\])\d/);
    expect(log).not.toContain(`"8642"`);
  });
});
