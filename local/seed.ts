import { readFile } from 'node:fs/promises';
import * as z from 'zod/mini';
import type { CredentialStore, IssuedCredential, SecretHasher } from '#shared/domain/credentials.ts';
import { issueCredential } from '#shared/domain/credentials.ts';
import { Conflict } from '#shared/domain/errors.ts';
import type { OrganizationStore } from '#shared/domain/tenancy.ts';
import { registerOrganization } from '#shared/domain/tenancy.ts';

const seedSchema = z.strictObject({
  organizations: z.array(
    z.strictObject({
      organization_id: z.string(),
      parent_organization_id: z.optional(z.string()),
      credentials: z._default(z.array(z.strictObject({ api_access_id: z.string(), api_secure_key: z.string() })), []),
    }),
  ),
});

export type Seed = z.infer<typeof seedSchema>;

export async function readSeedFile(file: string): Promise<Seed> {
  const text = await readFile(file, 'utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`LOCAL_SEED ${file} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  // zod/mini carries no messages of its own; whoever writes a seed file reads these.
  const parsed = seedSchema.safeParse(json, { error: z.locales.en().localeError });
  if (!parsed.success) {
    throw new Error(`LOCAL_SEED ${file} does not match the seed format: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`);
  }
  return parsed.data;
}

/**
 * Registers parents before children, whatever the file's order. Re-running a
 * seed against a persisted store keeps what is already there.
 */
export async function applySeed(
  seed: Seed,
  deps: { organizations: OrganizationStore; credentials: CredentialStore; hasher: SecretHasher },
): Promise<IssuedCredential[]> {
  const pending = [...seed.organizations];
  const known = new Set<string>();
  const issued: IssuedCredential[] = [];
  while (pending.length > 0) {
    const index = pending.findIndex((org) => !org.parent_organization_id || known.has(org.parent_organization_id) || !pending.some((other) => other.organization_id === org.parent_organization_id));
    if (index < 0) throw new Error('LOCAL_SEED has a cycle in parent_organization_id');
    const [organization] = pending.splice(index, 1);
    if (!organization) break;
    await ignoreConflict(() =>
      registerOrganization({ organizationId: organization.organization_id, parentOrganizationId: organization.parent_organization_id }, deps.organizations),
    );
    known.add(organization.organization_id);
    for (const credential of organization.credentials) {
      const input = { organizationId: organization.organization_id, accessId: credential.api_access_id, secureKey: credential.api_secure_key };
      await ignoreConflict(async () => issued.push(await issueCredential(input, deps)));
    }
  }
  return issued;
}

async function ignoreConflict(action: () => Promise<unknown>): Promise<void> {
  try {
    await action();
  } catch (error) {
    if (!(error instanceof Conflict)) throw error;
  }
}
