import type { IdempotencyCompletion } from '../idempotency.ts';
import { newToken } from '../ids.ts';
import type { Vault } from '../vault.ts';
import { cardDetails, echeckDetails } from './create.ts';
import type { OneTimeToken } from './model.ts';
import type { OneTimeTokenRepository } from './ports.ts';
import { oneTimeTokenSchema, parseBody } from './validation.ts';

/** The contract fixes a one-time token's life at 60 minutes. */
export const ONE_TIME_TOKEN_LIFETIME_MS = 60 * 60 * 1000;

export interface MintOneTimeTokenDeps {
  oneTimeTokens: OneTimeTokenRepository;
  vault: Vault;
  clock: () => Date;
}

/**
 * Mints a single-use token for a full card or echeck under one organization
 * and location. Its number is sealed like a paymethod's, bound to the token.
 *
 * No fingerprint: minting stores no paymethod, and anyone may mint (a
 * publishable key is public), so a fingerprint here would compute the
 * organization's keyed hash of any number on demand, and with the BIN and
 * last four rebuild a stored number (docs/vault.md, "Correlation"). The
 * create that stores the number computes it (create.ts).
 */
export async function mintOneTimeToken(
  command: { organizationId: string; locationId: string; body: Record<string, unknown>; completion?: IdempotencyCompletion<OneTimeToken> },
  deps: MintOneTimeTokenDeps,
): Promise<OneTimeToken> {
  const now = deps.clock();
  const input = parseBody(oneTimeTokenSchema, command.body, now);
  const token = newToken('ott_');
  const accountNumber = input.instrument === 'card' ? input.card.account_number : input.echeck.account_number;
  const secret = await deps.vault.seal(accountNumber, { organizationId: command.organizationId, recordToken: token });
  const record: OneTimeToken = {
    one_time_token: token,
    organization_id: command.organizationId,
    location_id: command.locationId,
    ...(input.instrument === 'card' ? { paymethod_type: 'card' as const, card: cardDetails(input.card) } : { paymethod_type: 'echeck' as const, echeck: echeckDetails(input.echeck) }),
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + ONE_TIME_TOKEN_LIFETIME_MS).toISOString(),
  };
  await deps.oneTimeTokens.create(record, secret, command.completion);
  return record;
}
