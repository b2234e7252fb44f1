import type { EndpointAdminDeps } from '#shared/domain/webhooks/ports.ts';
import { vault } from './number-keys.ts';
import { endpointUpdateDeps } from './webhooks.ts';

/** Create and roll_secret seal a new signing secret under the vault key. */
export const endpointAdminDeps = (): EndpointAdminDeps => ({ ...endpointUpdateDeps(), vault: vault() });
