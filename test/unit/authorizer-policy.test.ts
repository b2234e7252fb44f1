import { describe, expect, it } from 'vitest';

describe('authorizer policy resource', () => {
  it('covers every method and path of the stage, so a cached decision serves all routes', async () => {
    const { stageWideArn } = await import('#functions/authorizer.ts');
    const methodArn = 'arn:aws:execute-api:us-east-1:123456789012:abc123/prod/POST/v3/organizations/org_1/paymethods';
    expect(stageWideArn(methodArn)).toBe('arn:aws:execute-api:us-east-1:123456789012:abc123/prod/*/*');
  });
});

describe('publishable key policy resource', () => {
  it('names only the routes that accept publishable keys, with path parameters as wildcards, with and without a trailing slash', async () => {
    const { publishableRouteArns } = await import('#functions/authorizer.ts');
    const methodArn = 'arn:aws:execute-api:us-east-1:123456789012:abc123/prod/POST/v3/organizations/org_1/locations/loc_1/onetimetokens';
    expect(publishableRouteArns(methodArn)).toEqual([
      'arn:aws:execute-api:us-east-1:123456789012:abc123/prod/POST/v3/organizations/*/locations/*/onetimetokens',
      'arn:aws:execute-api:us-east-1:123456789012:abc123/prod/POST/v3/organizations/*/locations/*/onetimetokens/',
    ]);
  });
});
