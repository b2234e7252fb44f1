/**
 * The endpoint API's use cases: register, read, change, remove, roll the
 * secret. A secret is made here, sealed before it is stored, and returned
 * once, to the request that made it.
 */
import { randomBase62 } from '../ids.ts';
import { Conflict, InvalidRequest, NotFound } from '../errors.ts';
import type { IdempotencyCompletion } from '../idempotency.ts';
import type { DisabledReason, WebhookEndpoint } from './model.ts';
import { MAX_ENDPOINTS_PER_ORGANIZATION } from './model.ts';
import type { EndpointAdminDeps, EndpointStore } from './ports.ts';
import { newSigningSecret } from './signing.ts';
import { checkEndpointUrl } from './url-rules.ts';
import { endpointCreateSchema, endpointUpdateSchema, parseWebhookBody, rollSecretSchema } from './validation.ts';

export const ENDPOINT_ID_PREFIX = 'whe_';
export const newEndpointId = () => ENDPOINT_ID_PREFIX + randomBase62(22);

const bindingOf = (organizationId: string, endpointId: string) => ({ organizationId, recordToken: endpointId });

/** A body may repeat the path's organization (with or without its prefix); another one is 400. */
function assertSameOrganization(member: string | undefined, organizationId: string): void {
  if (member === undefined) return;
  if (member !== organizationId && `org_${member}` !== organizationId) throw new InvalidRequest([{ field: 'organization_id', message: 'differs from the path' }]);
}

/**
 * The secret is in this answer only: an Idempotency-Key replay answers the
 * endpoint without it (`completion` stores the answer without the secret).
 */
export async function createEndpoint(organizationId: string, body: unknown, deps: EndpointAdminDeps, completion?: IdempotencyCompletion<WebhookEndpoint>): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const form = parseWebhookBody(endpointCreateSchema, body);
  assertSameOrganization(form.organization_id, organizationId);
  const url = await checkEndpointUrl(form.url, deps.urlPolicy, deps.resolve);
  const now = deps.clock().toISOString();
  const id = newEndpointId();
  const secret = newSigningSecret();
  const endpoint: WebhookEndpoint = {
    webhook_endpoint_id: id,
    organization_id: organizationId,
    url,
    event_types: form.event_types ?? ['*'],
    ...(form.description !== undefined ? { description: form.description } : {}),
    status: 'enabled',
    created_at: now,
    updated_at: now,
    secret: await deps.vault.seal(secret, bindingOf(organizationId, id)),
  };
  if (!(await deps.endpoints.create(endpoint, MAX_ENDPOINTS_PER_ORGANIZATION, completion))) {
    throw new Conflict('ENDPOINT_LIMIT', `an organization has at most ${MAX_ENDPOINTS_PER_ORGANIZATION} webhook endpoints`);
  }
  return { endpoint, secret };
}

export async function getEndpoint(organizationId: string, endpointId: string, deps: { endpoints: Pick<EndpointStore, 'get'> }): Promise<WebhookEndpoint> {
  const endpoint = await deps.endpoints.get(organizationId, endpointId);
  if (!endpoint) throw new NotFound('webhook endpoint not found');
  return endpoint;
}

/** Newest first; at most 16, so a page is a slice of one Query. */
export async function listEndpoints(organizationId: string, deps: { endpoints: Pick<EndpointStore, 'list'> }): Promise<WebhookEndpoint[]> {
  const endpoints = await deps.endpoints.list(organizationId);
  return endpoints.sort((a, b) => (a.created_at === b.created_at ? b.webhook_endpoint_id.localeCompare(a.webhook_endpoint_id) : b.created_at.localeCompare(a.created_at)));
}

export async function updateEndpoint(organizationId: string, endpointId: string, body: unknown, deps: Omit<EndpointAdminDeps, 'vault'>): Promise<WebhookEndpoint> {
  const form = parseWebhookBody(endpointUpdateSchema, body);
  assertSameOrganization(form.organization_id, organizationId);
  const url = form.url !== undefined ? await checkEndpointUrl(form.url, deps.urlPolicy, deps.resolve) : undefined;
  return changeEndpoint(organizationId, endpointId, deps, (current, now) => {
    const status = form.status ?? current.status;
    const reason: DisabledReason | undefined = status === 'disabled' ? (form.status === 'disabled' && current.status === 'enabled' ? 'disabled_by_merchant' : current.disabled_reason) : undefined;
    return {
      ...current,
      ...(url !== undefined ? { url } : {}),
      ...(form.event_types !== undefined ? { event_types: form.event_types } : {}),
      ...(form.description !== undefined ? { description: form.description } : {}),
      status,
      disabled_reason: reason,
      // Enabled again: the failures before do not count towards the five days.
      failing_since: status === 'enabled' && current.status === 'disabled' ? undefined : current.failing_since,
      updated_at: now,
    };
  });
}

/** A new secret; the previous one keeps signing for `expire_previous_after_seconds` (0: from now on only the new one). */
export async function rollSecret(organizationId: string, endpointId: string, body: unknown, deps: EndpointAdminDeps): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const { expire_previous_after_seconds: overlap } = parseWebhookBody(rollSecretSchema, body);
  const secret = newSigningSecret();
  const sealed = await deps.vault.seal(secret, bindingOf(organizationId, endpointId));
  const endpoint = await changeEndpoint(organizationId, endpointId, deps, (current, now) => ({
    ...current,
    secret: sealed,
    previous_secret: overlap > 0 ? current.secret : undefined,
    previous_secret_expires_at: overlap > 0 ? new Date(Date.parse(now) + overlap * 1000).toISOString() : undefined,
    updated_at: now,
  }));
  return { endpoint, secret };
}

export async function deleteEndpoint(organizationId: string, endpointId: string, deps: { endpoints: Pick<EndpointStore, 'remove'> }): Promise<void> {
  if (!(await deps.endpoints.remove(organizationId, endpointId))) throw new NotFound('webhook endpoint not found');
}

/** Read, change, write if unchanged since; a concurrent change makes it read again (a few times). */
async function changeEndpoint(organizationId: string, endpointId: string, deps: Pick<EndpointAdminDeps, 'endpoints' | 'clock'>, change: (current: WebhookEndpoint, now: string) => WebhookEndpoint): Promise<WebhookEndpoint> {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const current = await getEndpoint(organizationId, endpointId, deps);
    // updated_at is the write's version: strictly later than the one it replaces.
    const now = new Date(Math.max(deps.clock().getTime(), Date.parse(current.updated_at) + 1)).toISOString();
    const next = change(current, now);
    if (await deps.endpoints.replace(current, next)) return next;
  }
  throw new Conflict('CONCURRENT_MODIFICATION', 'the webhook endpoint changed while this request ran; retry it');
}
