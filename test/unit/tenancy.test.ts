import { describe, expect, it } from 'vitest';
import { AccessDenied, InvalidRequest, NotFound } from '#shared/domain/errors.ts';
import type { Organization, OrganizationStore } from '#shared/domain/tenancy.ts';
import { assertOrganizationAccess, registerOrganization } from '#shared/domain/tenancy.ts';

function memoryOrganizations(): OrganizationStore & { reads: number } {
  const byId = new Map<string, Organization>();
  return {
    reads: 0,
    async get(id) {
      this.reads++;
      return byId.get(id);
    },
    async create(organization) {
      byId.set(organization.organization_id, organization);
    },
  };
}

describe('organization access', () => {
  it('allows the organization itself without a read, and a direct child with one', async () => {
    const organizations = memoryOrganizations();
    await registerOrganization({ organizationId: 'org_partner' }, organizations);
    await registerOrganization({ organizationId: 'org_merchant', parentOrganizationId: 'org_partner' }, organizations);
    organizations.reads = 0;
    await assertOrganizationAccess({ organizationId: 'org_merchant', accessId: 'a' }, 'org_merchant', organizations);
    expect(organizations.reads).toBe(0);
    await assertOrganizationAccess({ organizationId: 'org_partner', accessId: 'a' }, 'org_merchant', organizations);
  });

  it('denies parents, siblings, strangers and unknown organizations with the same error', async () => {
    const organizations = memoryOrganizations();
    await registerOrganization({ organizationId: 'org_p' }, organizations);
    await registerOrganization({ organizationId: 'org_m1', parentOrganizationId: 'org_p' }, organizations);
    await registerOrganization({ organizationId: 'org_m2', parentOrganizationId: 'org_p' }, organizations);
    const denied = [
      [{ organizationId: 'org_m1', accessId: 'a' }, 'org_p'],
      [{ organizationId: 'org_m1', accessId: 'a' }, 'org_m2'],
      [{ organizationId: 'org_p', accessId: 'a' }, 'org_unknown'],
    ] as const;
    for (const [caller, target] of denied) await expect(assertOrganizationAccess(caller, target, organizations)).rejects.toBeInstanceOf(AccessDenied);
  });

  it('validates new organizations and their parent', async () => {
    const organizations = memoryOrganizations();
    await expect(registerOrganization({ organizationId: 'acme' }, organizations)).rejects.toBeInstanceOf(InvalidRequest);
    await expect(registerOrganization({ organizationId: 'org_a', parentOrganizationId: 'org_a' }, organizations)).rejects.toBeInstanceOf(InvalidRequest);
    await expect(registerOrganization({ organizationId: 'org_a', parentOrganizationId: 'org_missing' }, organizations)).rejects.toBeInstanceOf(NotFound);
  });
});
