import { describe, expect, it } from 'vitest';
import { routeSchemas } from '#shared/http/route-schemas.ts';
import type { ApiAnswer } from '../support/api.ts';
import { call, MERCHANT, PARTNER, UNRELATED, useRuntimeEnvironment } from '../support/api.ts';
import { CARD, CARD_NUMBER, ECHECK, ECHECK_NUMBER, expectError, locationPath, post, unique } from '../support/paymethods.ts';

const ORG = MERCHANT.organizationId;

async function mint(loc: string, body: Record<string, unknown>): Promise<ApiAnswer> {
  const answer = await post(`${locationPath(ORG, loc)}/onetimetokens`, body);
  expect(answer.status, answer.text).toBe(201);
  return answer;
}

/** The path of an absolute link of the local runtime. */
const pathOfLink = (link: string) => new URL(link).pathname;

describe('GET .../onetimetokens/{one_time_token}', () => {
  it("answers at the mint's Location and links.self with the token's public members, as minted", async () => {
    for (const instrument of [{ card: CARD }, { echeck: ECHECK }]) {
      const minted = await mint(unique('loc_'), instrument);
      const location = minted.headers.get('location') as string;
      expect((minted.body.links as { self: string }).self).toBe(location);

      const read = await call(pathOfLink(location));
      expect(read.status, read.text).toBe(200);
      const { response: mintedResponse, ...mintedMembers } = minted.body;
      const { response, ...members } = read.body;
      expect(members).toEqual(mintedMembers);
      expect(response).toMatchObject({ response_desc: 'Get Successful.' });
      expect(mintedResponse).toMatchObject({ response_desc: 'Create Successful.' });
      expect(read.text).not.toContain(CARD_NUMBER);
      expect(read.text).not.toContain(ECHECK_NUMBER);
      // The documented answer, with no undocumented member.
      expect(routeSchemas['onetimetokens-get']!.response.schema!.parse(read.body)).toEqual(read.body);
    }
  });

  it('is 404 once a paymethod was created from the token', async () => {
    const loc = unique('loc_');
    const minted = await mint(loc, { card: CARD });
    const token = minted.body.one_time_token as string;
    const created = await post(`${locationPath(ORG, loc)}/paymethods`, { card: { one_time_token: token, name_on_card: 'Ann Lee' } });
    expect(created.status, created.text).toBe(201);
    expectError(await call(`${locationPath(ORG, loc)}/onetimetokens/${token}`), 404);
  });

  it('is 404 for an expired token (TTL deletes lazily, so the read checks the expiry)', async () => {
    const env = useRuntimeEnvironment();
    const { UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
    const { dynamo } = await import('#shared/aws/dynamodb.ts');
    const loc = unique('loc_');
    const token = (await mint(loc, { card: CARD })).body.one_time_token as string;
    await dynamo.send(new UpdateCommand({ TableName: env.TABLE_NAME, Key: { pk: `OTT#${token}`, sk: 'OTT' }, UpdateExpression: 'SET expires_at_iso = :past', ExpressionAttributeValues: { ':past': '2020-01-01T00:00:00.000Z' } }));
    expectError(await call(`${locationPath(ORG, loc)}/onetimetokens/${token}`), 404);
  });

  it('is 404 under another location or organization, for an unknown token and for a segment without ott_', async () => {
    const loc = unique('loc_');
    const token = (await mint(loc, { card: CARD })).body.one_time_token as string;
    const mine = `${locationPath(ORG, loc)}/onetimetokens/${token}`;
    expectError(await call(`${locationPath(ORG, unique('loc_'))}/onetimetokens/${token}`), 404);
    // The partner may act on its merchant's organization, but the token was minted under the merchant's: at the partner's own it is unknown.
    expectError(await call(`${locationPath(PARTNER.organizationId, loc)}/onetimetokens/${token}`, { as: PARTNER }), 404);
    expectError(await call(`${locationPath(UNRELATED.organizationId, loc)}/onetimetokens/${token}`, { as: UNRELATED }), 404);
    expectError(await call(`${locationPath(ORG, loc)}/onetimetokens/ott_${'0'.repeat(22)}`), 404);
    expectError(await call(`${locationPath(ORG, loc)}/onetimetokens/${token.slice('ott_'.length)}`), 404);
    // Another organization's caller does not learn that it exists: 403 before any read, as on every route.
    expectError(await call(mine, { as: UNRELATED }), 403);
    // Reading does not use the token.
    expect((await call(mine)).status).toBe(200);
    expect((await call(mine, { as: PARTNER })).status).toBe(200);
  });
});
