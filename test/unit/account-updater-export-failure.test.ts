import { afterEach, describe, expect, it, vi } from 'vitest';
import type * as ExportModule from '#shared/domain/account-updater/export.ts';

vi.mock('#shared/domain/account-updater/export.ts', async (importOriginal) => ({
  ...(await importOriginal<typeof ExportModule>()),
  exportAccountUpdates: vi.fn(async () => Promise.reject(new Error('the reports bucket is unavailable (injected)'))),
}));
vi.mock('#shared/wiring/account-updater.ts', () => ({ clock: () => new Date('2026-06-01T06:00:00Z'), exportHistoryDeps: () => ({}) }));
vi.mock('#shared/wiring/account-updater-export.ts', () => ({ exportDeps: () => ({}) }));

describe('au-export handler', () => {
  afterEach(() => vi.restoreAllMocks());

  it('records AccountUpdaterExportFailures for a failed attempt, and fails it for Lambda to retry', async () => {
    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => out.push(String(chunk)) > 0);
    const { handler } = await import('#functions/au-export.ts');
    const { lambdaContext } = await import('../support/lambda-event.ts');
    await expect(handler({ time: '2026-06-01T06:00:00Z' }, lambdaContext('au-export'))).rejects.toThrow('injected');
    const metrics = out.flatMap((line) => (line.includes('"_aws"') ? [JSON.parse(line) as Record<string, unknown>] : []));
    expect(metrics.some((line) => line.AccountUpdaterExportFailures === 1)).toBe(true);
  });
});
