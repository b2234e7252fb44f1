import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import { MERCHANT, useRuntimeEnvironment } from '../support/api.ts';
import { npmScript } from '../support/cli.ts';
import { ECHECK, expectError, locationPath, post, unique } from '../support/paymethods.ts';

/**
 * docs/test-values.md, read as a client reads it: every value it lists is
 * sent to the running service (or its stand-ins) and answers as the page says.
 */
const repoRoot = path.resolve(import.meta.dirname, '../..');
const page = await readFile(path.join(repoRoot, 'docs/test-values.md'), 'utf8');

/** The rows of the table after `<!-- test-values: name -->`, each as its cells with backticks removed. */
function table(name: string): string[][] {
  const lines = page.split('\n');
  const start = lines.indexOf(`<!-- test-values: ${name} -->`);
  expect(start, name).toBeGreaterThanOrEqual(0);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 3)) {
    if (!line.startsWith('|')) break;
    rows.push(line.split('|').slice(1, -1).map((cell) => cell.trim().replace(/^`([^`]*)`.*$/, '$1')));
  }
  return rows;
}

const ORG = MERCHANT.organizationId;

describe('docs/test-values.md against the running service', () => {
  const loc = unique('loc_');

  it('lists a card for every brand the API knows, and each creates a card with its last four', async () => {
    const { CARD_TYPES } = await import('#shared/domain/paymethods/rules.ts');
    const cards = table('cards');
    expect(cards.map(([cardType]) => cardType).sort()).toEqual([...CARD_TYPES].sort());
    for (const [cardType, accountNumber, lastFour] of cards) {
      const cvv = cardType === 'amex' ? '1234' : '123';
      const answer = await post(`${locationPath(ORG, loc)}/paymethods`, { card: { card_type: cardType, name_on_card: 'Test Values', account_number: accountNumber, expire_month: 12, expire_year: 2031, card_verification_value: cvv } });
      expect(answer.status, `${cardType}: ${answer.text}`).toBe(201);
      expect((answer.body.card as Record<string, unknown>).last_4_account_number).toBe(lastFour);
    }
    expectError(await post(`${locationPath(ORG, loc)}/paymethods`, { card: { card_type: 'visa', name_on_card: 'T', account_number: '4111111111111112', expire_month: 12, expire_year: 2031 } }), 400, ['card.account_number']);
    expectError(await post(`${locationPath(ORG, loc)}/paymethods`, { card: { card_type: 'visa', name_on_card: 'T', account_number: '5555555555554444', expire_month: 12, expire_year: 2031 } }), 400, ['card.card_type']);
  });

  it('gives a routing number per country that creates an echeck, and the bad one is 400', async () => {
    const routing = table('routing');
    expect(routing.map(([country]) => country)).toEqual(['United States', 'Canada']);
    for (const [country, routingNumber] of routing) {
      const answer = await post(`${locationPath(ORG, loc)}/paymethods`, { echeck: { ...ECHECK, routing_number: routingNumber } });
      expect(answer.status, `${country}: ${answer.text}`).toBe(201);
    }
    expectError(await post(`${locationPath(ORG, loc)}/paymethods`, { echeck: { ...ECHECK, routing_number: '121000359' } }), 400, ['echeck.routing_number']);
  });

  it('has PayPal tokens that the stand-in approves and refuses as documented', async () => {
    const tokens = table('paypal');
    expect(tokens.map(([token, answer]) => [token, answer!.slice(0, 3)])).toEqual([
      ['BA-8A802366G0648845U', '201'],
      ['BA-DECLINED000000000', '400'],
      ['BA-SHORT', '400'],
    ]);
    const { DECLINED_BILLING_AGREEMENT_TOKENS } = await import('#local/paypal-standin.ts');
    expect(DECLINED_BILLING_AGREEMENT_TOKENS).toEqual(['BA-DECLINED000000000']);
    const create = (token: string) => post(`${locationPath(ORG, loc)}/customers/${unique('cst_')}/paymethods`, { vendor: { vendor_type: 'paypal', vendor_billing_agreement_token: token } });
    const approved = await create('BA-8A802366G0648845U');
    expect(approved.status, approved.text).toBe(201);
    expect((approved.body.vendor as Record<string, unknown>).vendor_billing_agreement_id).toMatch(/^B-[A-Z0-9]{17}$/);
    for (const token of ['BA-DECLINED000000000', 'BA-SHORT']) {
      const refused = await create(token);
      expectError(refused, 400, ['vendor.vendor_billing_agreement_token']);
      expect((refused.body.response as Record<string, unknown>).response_code).toBe('VENDOR_REFUSED');
    }
  });

  it('gives the EICAR test file exactly: 68 bytes, the published digest', () => {
    const block = page.slice(page.indexOf('<!-- test-values: eicar -->'));
    const eicar = /```text\n(.*)\n```/.exec(block)![1]!;
    expect(Buffer.byteLength(eicar)).toBe(68);
    expect(createHash('sha256').update(eicar).digest('hex')).toBe('275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f');
  });

  it('ships an Account Updater sample that applies cleanly to four cards with its tokens, then changes nothing', async () => {
    const environment = useRuntimeEnvironment();
    const sample = path.join(repoRoot, 'docs/samples/account-updater.csv');
    const rows = (await readFile(sample, 'utf8')).trimEnd().split('\r\n').slice(1).map((line) => line.split(','));
    expect(rows.map(([, code]) => code)).toEqual(['new', 'exp', 'cls', 'con']);
    // The cards the page asks for: four visa cards with the sample's tokens, written as the API stores them.
    const { dynamo } = await import('#shared/aws/dynamodb.ts');
    const { paymethodItem } = await import('#shared/store/paymethod-item.ts');
    const { batchDeps } = await import('#shared/wiring/account-updater.ts');
    const { vault } = batchDeps();
    const items = [];
    for (const [token] of rows) {
      const record: Paymethod = {
        paymethod_token: token!, organization_id: ORG, location_id: loc, paymethod_type: 'card',
        card: { card_type: 'visa', name_on_card: 'Sample Card', last_4_account_number: '1111', masked_account_number: '****1111', expire_month: 12, expire_year: 2031 },
        is_default: false, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', version: 1,
      };
      items.push({ PutRequest: { Item: paymethodItem(record, await vault.seal('4111111111111111', { organizationId: ORG, recordToken: token! })) } });
    }
    await dynamo.send(new BatchWriteCommand({ RequestItems: { [environment.TABLE_NAME!]: items } }));
    const first = await npmScript('au:apply', sample);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({ applied: 4, skipped: 0, errors: [], error_count: 0, notes: [] });
    expect(page).toContain('# -> {"applied": 4, "skipped": 0, "errors": [], "error_count": 0, "notes": []}');
    const again = await npmScript('au:apply', sample);
    expect(JSON.parse(again.stdout)).toMatchObject({ applied: 0, skipped: 4, error_count: 0 });
  });
});
