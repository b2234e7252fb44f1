import { describe, expect, it } from 'vitest';
import { duration, LINE_INTERVAL_MS, progressBar, progressReporter, progressText } from '../../scripts/progress.ts';

describe('command-line progress', () => {
  it('says rows done of all, the rate, errors so far and the time left', () => {
    expect(progressText({ done: 40_000, total: 100_000, errors: 12, elapsedMs: 50_000 })).toBe('40,000/100,000 rows (40%), 800 rows/s, 12 errors, 50s in, about 1m 15s left');
    expect(progressText({ done: 0, total: 100_000, errors: 0, elapsedMs: 0 })).toBe('0/100,000 rows (0%), 0 rows/s, 0 errors, 0s in, estimating time left');
    expect(progressText({ done: 100_000, total: 100_000, errors: 1, elapsedMs: 125_000 })).toBe('100,000/100,000 rows (100%), 800 rows/s, 1 error, 2m 05s in, done');
    expect(progressBar({ done: 50, total: 100, errors: 0, elapsedMs: 1000 })).toBe('[############------------] 50/100 rows (50%), 50 rows/s, 0 errors, 1s in, about 1s left');
    expect([duration(42_000), duration(185_000), duration(3_720_000)]).toEqual(['42s', '3m 05s', '1h 02m']);
  });

  it('writes a line every few seconds to a file or a pipe, and a last one when done', () => {
    let clock = 0;
    const written: string[] = [];
    const reporter = progressReporter({ write: (text: string) => written.push(text), isTTY: false }, () => clock);
    reporter.start(1000);
    for (let batch = 0; batch < 10; batch += 1) {
      clock += 1000;
      reporter.add(100, 1);
    }
    reporter.finish();
    expect(written).toEqual([
      '0/1,000 rows (0%), 0 rows/s, 0 errors, 0s in, estimating time left\n',
      '500/1,000 rows (50%), 100 rows/s, 5 errors, 5s in, about 5s left\n',
      '1,000/1,000 rows (100%), 100 rows/s, 10 errors, 10s in, done\n',
    ]);
    // Finishing between two lines writes the last state once.
    const again: string[] = [];
    const partial = progressReporter({ write: (text: string) => again.push(text), isTTY: false }, () => clock);
    partial.start(10);
    partial.add(3, 0);
    partial.finish();
    expect(again).toHaveLength(2);
    expect(LINE_INTERVAL_MS).toBe(5000);
  });

  it('redraws a bar in place on a terminal, and ends its line when done', () => {
    let clock = 0;
    const written: string[] = [];
    const reporter = progressReporter({ write: (text: string) => written.push(text), isTTY: true }, () => clock);
    reporter.start(200);
    clock += 1000;
    reporter.add(100, 0);
    reporter.finish();
    expect(written.every((text) => text === '\n' || (text.startsWith('\r[') && text.endsWith('\u001b[K')))).toBe(true);
    expect(written.at(-2)).toBe('\r[############------------] 100/200 rows (50%), 100 rows/s, 0 errors, 1s in, about 1s left\u001b[K');
    expect(written.at(-1)).toBe('\n');
    expect(written.join('')).not.toContain('\n[');
  });

  it('writes nothing for a run that never started (a refused file)', () => {
    const written: string[] = [];
    const reporter = progressReporter({ write: (text: string) => written.push(text), isTTY: false });
    reporter.finish();
    expect(written).toEqual([]);
  });
});
