/** Every figure docs/documents.md states about the code, compared with the code and the template. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_FILE_BYTES, RETENTION_YEARS, retentionRuleDate } from '#shared/domain/documents/document.ts';
import { DOWNLOAD_URL_SECONDS, SCAN_PENDING_RETRY_SECONDS } from '#shared/domain/documents/read-documents.ts';
import { MALWARE_SCAN } from '#shared/platform/triggers.ts';
import { ASYNC_RETRIES, EICAR, FIRST_RETRY_MS, LOCAL_SCAN_MS } from '../../local/malware-scanner.ts';
import { fixtureRoutes } from './fixtures/routes.ts';
import { bucketId, resourcesOfType, settings, synthesize } from './template-helpers.ts';

const documents = readFileSync(new URL('../../docs/documents.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
const functionsDir = fileURLToPath(new URL('./fixtures/functions', import.meta.url));

describe('docs/documents.md', () => {
  let rule: { Id: string; Prefix?: string; ObjectSizeGreaterThan?: string; Transitions?: Array<{ StorageClass: string; TransitionInDays: number }> };

  beforeAll(() => {
    const template = synthesize(settings('prod'), { routes: fixtureRoutes, functionsDir });
    const bucket = resourcesOfType(template, 'AWS::S3::Bucket')[bucketId(template, 'documents')]!;
    const rules = (bucket.Properties.LifecycleConfiguration as { Rules: Array<typeof rule> }).Rules;
    rule = rules.find((candidate) => candidate.Id === 'stored-documents-to-glacier-ir')!;
  }, 120_000);

  it('states the lifecycle rule as the template has it', () => {
    expect(rule).toMatchObject({ Prefix: 'documents/', Transitions: [{ StorageClass: 'GLACIER_IR' }] });
    const [transition] = rule.Transitions!;
    expect(documents).toContain(`objects under \`documents/\` larger than ${rule.ObjectSizeGreaterThan} bytes move to Glacier Instant Retrieval ${transition!.TransitionInDays} days after they are stored`);
    expect(documents).toContain(`Standard for ${transition!.TransitionInDays} days, then Glacier IR for ${24 - transition!.TransitionInDays / 30} months`);
    expect(rule.ObjectSizeGreaterThan).toBe(String(128 * 1024));
  });

  it('states the retention rule, the scan answers and the local scanner as the code has them', () => {
    expect(documents).toContain(`kept until \`received_date\` plus ${RETENTION_YEARS === 2 ? 'two' : RETENTION_YEARS} years (29 February plus two years is 1 March)`);
    expect(retentionRuleDate('dispute', 'wav', '2028-02-29T10:00:00.000Z')).toBe('2030-03-01');
    expect(retentionRuleDate('dispute', 'txt', '2028-02-29T10:00:00.000Z')).toBeUndefined();
    expect(retentionRuleDate('application', 'mp3', '2028-02-29T10:00:00.000Z')).toBeUndefined();
    expect(documents).toContain(`\`409 SCAN_PENDING\`, \`Retry-After: ${SCAN_PENDING_RETRY_SECONDS}\``);
    expect(documents).toContain(`a presigned URL valid ${DOWNLOAD_URL_SECONDS / 60 === 5 ? 'five' : DOWNLOAD_URL_SECONDS / 60} minutes`);
    expect(documents).toContain(`reports the ${Buffer.byteLength(EICAR, 'latin1')}-byte EICAR test file`);
    expect(documents).toContain(`${LOCAL_SCAN_MS === 500 ? 'half a second' : `${LOCAL_SCAN_MS} ms`} after the upload (the contract allows 10 s)`);
    expect([ASYNC_RETRIES, FIRST_RETRY_MS]).toEqual([2, 1_000]);
    expect(documents).toContain('It retries a failed invocation twice, one and then two seconds later.');
    // The last retry still reports inside the contract's 10 s.
    expect(LOCAL_SCAN_MS + FIRST_RETRY_MS * (2 ** ASYNC_RETRIES - 1)).toBeLessThan(10_000);
    expect(documents).toContain(`A document is at most ${MAX_FILE_BYTES.toLocaleString('en-US')} bytes`);
    expect(documents).toContain(`tags it \`${MALWARE_SCAN.tagKey}\``);
    expect(documents).toContain(`unless that tag is \`${MALWARE_SCAN.cleanTagValue}\``);
  });

  it('does its own arithmetic right', () => {
    const perGb = { standard: 0.023, glacierIr: 0.004, transitionPer1000: 0.02 };
    const standard = (24 * perGb.standard) / 1024;
    const withTransition = perGb.standard / 1024 + (23 * perGb.glacierIr) / 1024 + perGb.transitionPer1000 / 1000;
    expect(documents).toContain(`**$${standard.toFixed(6)}**`);
    expect(documents).toContain(`**$${withTransition.toFixed(6)}**`);
    expect(documents).toContain(`$${((standard * 100_000)).toFixed(2)} in Standard against $${(withTransition * 100_000).toFixed(2)} with the transition`);
    const breakEvenKb = (perGb.transitionPer1000 / 1000 / (23 * (perGb.standard - perGb.glacierIr))) * 1024 * 1024;
    expect(documents).toContain(`above about ${Math.round(breakEvenKb)} KB`);
  });
});
