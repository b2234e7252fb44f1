import type { SealedSecret, Vault } from '../vault.ts';
import { accountIdentity } from './create.ts';
import type { Fingerprinter } from './fingerprints.ts';
import type { Paymethod } from './model.ts';

/**
 * Gives records written before fingerprints existed their fingerprint. The walk
 * is resumable: each page ends with a resume token, and a record that already
 * has a fingerprint (or changed since it was read) is left alone, so running it
 * again, or from any earlier token, changes nothing that is already right.
 */
export interface FingerprintBackfillStore {
  /** One page of card and echeck records without a fingerprint, with their sealed numbers; `resume` continues after it. */
  pageWithoutFingerprint(resume: string | undefined, limit: number, organizationId?: string): Promise<{ records: Array<{ paymethod: Paymethod; secret?: SealedSecret }>; resume?: string }>;
  /**
   * Sets the fingerprint (its index key and its duplicate scope entry with it) only if the
   * record is still at `paymethod.version` without one; 'changed' when it is not.
   */
  setFingerprint(paymethod: Paymethod, fingerprint: string): Promise<'written' | 'changed'>;
}

export interface BackfillProgress {
  pages: number;
  /** Records without a fingerprint that this run read. */
  found: number;
  written: number;
  /** Changed, deleted or fingerprinted by someone else since read: left as they are. */
  changed: number;
  /** Records without a sealed number (nothing to fingerprint). */
  without_number: number;
  /** Absent once the walk reached the end; otherwise pass it as --resume to continue. */
  resume_token?: string;
}

export async function backfillFingerprints(
  options: { resume?: string; pageSize?: number; maxPages?: number; organizationId?: string; onPage?: (progress: BackfillProgress) => void },
  deps: { store: FingerprintBackfillStore; vault: Vault; fingerprinter: Fingerprinter },
): Promise<BackfillProgress> {
  const progress: BackfillProgress = { pages: 0, found: 0, written: 0, changed: 0, without_number: 0 };
  let resume = options.resume;
  do {
    const page = await deps.store.pageWithoutFingerprint(resume, options.pageSize ?? 100, options.organizationId);
    for (const { paymethod, secret } of page.records) {
      progress.found += 1;
      if (!secret) {
        progress.without_number += 1;
        continue;
      }
      const accountNumber = await deps.vault.open(secret, { organizationId: paymethod.organization_id, recordToken: paymethod.paymethod_token });
      const account = accountIdentity(paymethod, accountNumber);
      if (!account) continue;
      const outcome = await deps.store.setFingerprint(paymethod, await deps.fingerprinter.fingerprint(paymethod.organization_id, account));
      progress[outcome] += 1;
    }
    progress.pages += 1;
    resume = page.resume;
    if (resume) progress.resume_token = resume;
    else delete progress.resume_token;
    options.onPage?.({ ...progress });
  } while (resume && (options.maxPages === undefined || progress.pages < options.maxPages));
  return progress;
}
