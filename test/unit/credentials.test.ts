import { describe, expect, it } from 'vitest';
import type { CredentialStore, SecretHasher, StoredCredential } from '#shared/domain/credentials.ts';
import { issueCredential, parseBasicAuthorization, verifySecureKey } from '#shared/domain/credentials.ts';
import { Conflict, InvalidRequest, NotFound } from '#shared/domain/errors.ts';
import type { Organization, OrganizationStore } from '#shared/domain/tenancy.ts';
import { createHmac } from 'node:crypto';

const basic = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`;

describe('parseBasicAuthorization', () => {
  it('reads id and key, with a key that may contain colons', () => {
    expect(parseBasicAuthorization(basic('id:key:with:colons'))).toEqual({ accessId: 'id', secureKey: 'key:with:colons' });
    expect(parseBasicAuthorization(`basic ${Buffer.from('a:b').toString('base64')}`)).toEqual({ accessId: 'a', secureKey: 'b' });
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['another scheme', 'Bearer abc'],
    ['no credentials', 'Basic '],
    ['not base64', 'Basic ***'],
    ['non-canonical base64', 'Basic YTpi=='],
    ['no colon', basic('idonly')],
    ['empty id', basic(':key')],
    ['empty key', basic('id:')],
    ['id with a space', basic('i d:key')],
    ['not UTF-8', `Basic ${Buffer.from([0xc3, 0x28, 0x3a, 0x61]).toString('base64')}`],
    ['huge', basic(`id:${'k'.repeat(2000)}`)],
  ])('refuses %s', (_name, header) => {
    expect(parseBasicAuthorization(header)).toBeUndefined();
  });
});

class MemoryStores implements OrganizationStore {
  organizationsById = new Map<string, Organization>();
  credentialsById = new Map<string, StoredCredential>();
  async get(id: string): Promise<never> {
    throw new Error(`use the typed accessors ${id}`);
  }
  async create(): Promise<void> {}
  organizations: OrganizationStore = {
    get: async (id) => this.organizationsById.get(id),
    create: async (organization) => {
      if (this.organizationsById.has(organization.organization_id)) throw new Conflict('ORGANIZATION_EXISTS', 'exists');
      this.organizationsById.set(organization.organization_id, organization);
    },
  };
  useWrites = 0;
  credentials: CredentialStore = {
    get: async (id) => this.credentialsById.get(id),
    create: async (credential) => {
      if (this.credentialsById.has(credential.api_access_id)) throw new Conflict('CREDENTIAL_EXISTS', 'exists');
      this.credentialsById.set(credential.api_access_id, credential);
    },
    listByOrganization: async (organizationId) =>
      [...this.credentialsById.values()].filter((credential) => credential.organization_id === organizationId && credential.revoked_at === undefined),
    revoke: async (id, now) => {
      const credential = this.credentialsById.get(id);
      if (!credential) return false;
      credential.revoked_at ??= now.toISOString();
      return true;
    },
    recordUse: async (id, now, staleBefore) => {
      this.useWrites += 1;
      const credential = this.credentialsById.get(id);
      if (credential && credential.revoked_at === undefined && !(credential.last_used_at && credential.last_used_at >= staleBefore.toISOString())) {
        credential.last_used_at = now.toISOString();
      }
    },
  };
}

const hasher: SecretHasher = { version: 2, mac: async (secret) => createHmac('sha256', 'test-key').update(secret).digest() };

function fixture() {
  const stores = new MemoryStores();
  stores.organizationsById.set('org_1', { organization_id: 'org_1', created_at: '2026-01-01T00:00:00Z' });
  return { stores, deps: { organizations: stores.organizations, credentials: stores.credentials, hasher } };
}

describe('issueCredential and verifySecureKey', () => {
  const verify = (text: string, deps: ReturnType<typeof fixture>['deps']) => verifySecureKey(parseBasicAuthorization(basic(text))!, deps);

  it('stores only a keyed hash, with the version it was computed under, and verifies the key shown once', async () => {
    const { stores, deps } = fixture();
    const issued = await issueCredential({ organizationId: 'org_1' }, deps);
    expect(issued.api_secure_key).toMatch(/^sk_[0-9A-Za-z]{43}$/);
    expect(issued.api_access_id).toMatch(/^ak_[0-9A-Za-z]{22}$/);
    const stored = stores.credentialsById.get(issued.api_access_id);
    expect(JSON.stringify(stored)).not.toContain(issued.api_secure_key);
    expect(stored?.secret_mac_version).toBe(hasher.version);
    expect(await verify(`${issued.api_access_id}:${issued.api_secure_key}`, deps)).toEqual({ organizationId: 'org_1', accessId: issued.api_access_id });
  });

  it('refuses a wrong key, an unknown id and a hash of another version alike', async () => {
    const { stores, deps } = fixture();
    const issued = await issueCredential({ organizationId: 'org_1', accessId: 'id-1', secureKey: 'key-1' }, deps);
    expect(await verify('id-1:wrong', deps)).toBeUndefined();
    expect(await verify('id-2:key-1', deps)).toBeUndefined();
    stores.credentialsById.get('id-1')!.secret_mac_version = undefined;
    expect(await verify('id-1:key-1', deps)).toBeUndefined();
    expect(issued.api_secure_key).toBe('key-1');
  });

  it('refuses credentials for an unknown organization and invalid ids', async () => {
    const { deps } = fixture();
    await expect(issueCredential({ organizationId: 'org_9' }, deps)).rejects.toBeInstanceOf(NotFound);
    await expect(issueCredential({ organizationId: 'bad' }, deps)).rejects.toBeInstanceOf(InvalidRequest);
    await expect(issueCredential({ organizationId: 'org_1', accessId: 'has:colon' }, deps)).rejects.toBeInstanceOf(InvalidRequest);
  });

  it('refuses a taken access id', async () => {
    const { deps } = fixture();
    await issueCredential({ organizationId: 'org_1', accessId: 'same' }, deps);
    await expect(issueCredential({ organizationId: 'org_1', accessId: 'same' }, deps)).rejects.toBeInstanceOf(Conflict);
  });
});
