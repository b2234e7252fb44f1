import { describe, expect, it, vi } from 'vitest';

vi.stubEnv('TABLE_NAME', 'unit');
vi.stubEnv('CREDENTIAL_MAC_KEY_ID', 'unit');
const { stageWideArn } = await import('#functions/authorizer.ts');

describe('authorizer policy resource', () => {
  it('covers every method and path of the stage, whatever route was asked first', () => {
    expect(stageWideArn('arn:aws:execute-api:us-east-1:123456789012:abc123/prod/POST/v3/organizations/org_1/documents')).toBe(
      'arn:aws:execute-api:us-east-1:123456789012:abc123/prod/*/*',
    );
  });
});
