import { AccessDenied, InvalidRequest, NotFound } from './errors.ts';
import { isOrganizationId } from './ids.ts';

export interface Organization {
  organization_id: string;
  parent_organization_id?: string;
  created_at: string;
}

export interface OrganizationStore {
  get(organizationId: string): Promise<Organization | undefined>;
  /** Fails with Conflict when the organization exists already. */
  create(organization: Organization): Promise<void>;
}

/** Who is calling, as established by the authorizer. */
export interface Caller {
  organizationId: string;
  accessId: string;
}

/**
 * A caller may act on its own organization and on its direct children (a
 * partner owns its merchants). Anything else is 403, whether or not the target
 * exists, so the answer reveals nothing about other organizations.
 */
export async function assertOrganizationAccess(caller: Caller, targetOrganizationId: string, organizations: OrganizationStore): Promise<void> {
  if (caller.organizationId === targetOrganizationId) return;
  const target = await organizations.get(targetOrganizationId);
  if (target?.parent_organization_id !== caller.organizationId) throw new AccessDenied();
}

export async function registerOrganization(
  input: { organizationId: string; parentOrganizationId?: string },
  organizations: OrganizationStore,
  now: Date = new Date(),
): Promise<Organization> {
  const issues = [];
  if (!isOrganizationId(input.organizationId)) issues.push({ field: 'organization_id', message: 'must be org_ followed by 1 to 60 letters, digits, _ or -' });
  if (input.parentOrganizationId !== undefined && !isOrganizationId(input.parentOrganizationId)) {
    issues.push({ field: 'parent_organization_id', message: 'must be org_ followed by 1 to 60 letters, digits, _ or -' });
  }
  if (input.parentOrganizationId === input.organizationId) issues.push({ field: 'parent_organization_id', message: 'must differ from organization_id' });
  if (issues.length > 0) throw new InvalidRequest(issues);
  if (input.parentOrganizationId && !(await organizations.get(input.parentOrganizationId))) {
    throw new NotFound(`parent organization ${input.parentOrganizationId} does not exist`);
  }
  const organization: Organization = {
    organization_id: input.organizationId,
    ...(input.parentOrganizationId ? { parent_organization_id: input.parentOrganizationId } : {}),
    created_at: now.toISOString(),
  };
  await organizations.create(organization);
  return organization;
}

