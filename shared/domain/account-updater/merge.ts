import { csvField } from './export.ts';
import type { BatchResult, BatchResults, ReportWriter, RowNote } from './ports.ts';
import type { RowError } from './rows.ts';

/** The summary lists at most this many errors (and notes); the rest are counted, and errors written to a file. */
export const LISTED_ERRORS = 1_000;

/** Why a run failed as a whole: the map's error and cause, as Step Functions (or the local engine) names them. */
export interface RunFailure {
  error: string;
  cause?: string;
}

/** Each data row is counted exactly once: applied + skipped + error_count = rows. */
export interface RunSummary {
  /** Present only when the run failed as a whole: the lines no batch completed are errors (not applied). */
  failure?: RunFailure;
  applied: number;
  skipped: number;
  /** The first LISTED_ERRORS errors in line order. */
  errors: RowError[];
  error_count: number;
  /** Every error as CSV (`line,paymethod_token,reason`), written only when there are more than LISTED_ERRORS. */
  errors_key?: string;
  notes: RowNote[];
  /** Present when there are more notes than listed. */
  note_count?: number;
}

export interface MergeInput {
  run_id: string;
  /** Records in the file, the header included: lines 1 to `records` must each be in some batch's result. */
  records: number;
  /** Where the whole error list goes when it is too long for the summary. */
  errors_key: string;
  /** The run failed as a whole (its map failed): recorded in the summary, and named in the reason of lines not applied. */
  failure?: RunFailure;
}

const SUPERSEDED = /^superseded by line ([0-9]+)$/;
const NOT_APPLIED = 'not applied: its batch failed after its retries; apply the file again';
/** After a failed run a line's batch may also never have started, or been stopped with the run. */
const NOT_APPLIED_RUN_FAILED = 'not applied: the run failed before its batch completed; apply the file again';

/**
 * Merges the batch results of one run into its summary, reading them twice
 * in line order (counts first, then the error file when needed), so memory
 * holds the listed errors and the file's duplicate tokens, never the file.
 *
 * Batches may have run in any order: a line a later line of the same token
 * replaced after it was applied is counted as skipped here, and every
 * "superseded" note names the token's last line in the file.
 */
export async function mergeRun(input: MergeInput, deps: { results: BatchResults; reports: ReportWriter }): Promise<RunSummary> {
  let applied = 0;
  let skipped = 0;
  let errorCount = 0;
  const errors: RowError[] = [];
  const notes: RowNote[] = [];
  let noteCount = 0;
  const replaced = new Map<number, RowNote>();
  const skippedAsSuperseded = new Set<number>();
  /** Lines of batches that failed for good: counted as errors, whatever they did before failing. */
  const failedRanges: Array<{ from: number; to: number }> = [];
  const lastLineOf = new Map<string, number>();
  const noteSuperseded = (token: string, by: number) => lastLineOf.set(token, Math.max(by, lastLineOf.get(token) ?? 0));
  const notApplied = notAppliedAs(input.failure ? NOT_APPLIED_RUN_FAILED : NOT_APPLIED);

  for await (const item of withGaps(deps.results.list(input.run_id), input.records)) {
    if ('missing' in item) {
      failedRanges.push(item.missing);
      errorCount += item.missing.to - item.missing.from + 1;
      for (let line = item.missing.from; line <= item.missing.to && errors.length < LISTED_ERRORS; line += 1) errors.push(notApplied(line));
      continue;
    }
    applied += item.applied;
    skipped += item.skipped;
    errorCount += item.errors.length;
    for (const error of item.errors) if (errors.length < LISTED_ERRORS) errors.push(error);
    for (const note of item.notes) {
      noteCount += 1;
      if (notes.length < LISTED_ERRORS) notes.push(note);
      const by = SUPERSEDED.exec(note.reason);
      if (by) {
        skippedAsSuperseded.add(note.line);
        noteSuperseded(note.paymethod_token, Number(by[1]));
      }
    }
    for (const note of item.superseded) {
      replaced.set(note.line, note);
      noteSuperseded(note.paymethod_token, Number(SUPERSEDED.exec(note.reason)?.[1] ?? 0));
    }
  }
  // Lines applied and later replaced by a later line of the same token, and not already counted so by their own
  // batch, nor as errors with a batch that failed after applying them.
  for (const [line, note] of replaced) {
    if (skippedAsSuperseded.has(line) || failedRanges.some((range) => line >= range.from && line <= range.to)) continue;
    applied -= 1;
    skipped += 1;
    noteCount += 1;
    notes.push(note);
  }
  const byLine = (a: { line: number }, b: { line: number }) => a.line - b.line;
  const listedNotes = notes
    .sort(byLine)
    .slice(0, LISTED_ERRORS)
    .map((note) => (SUPERSEDED.test(note.reason) ? { ...note, reason: `superseded by line ${lastLineOf.get(note.paymethod_token)}` } : note));

  const summary: RunSummary = {
    ...(input.failure ? { failure: input.failure } : {}),
    applied,
    skipped,
    errors,
    error_count: errorCount,
    notes: listedNotes,
    ...(noteCount > listedNotes.length ? { note_count: noteCount } : {}),
  };
  if (errorCount > LISTED_ERRORS) {
    await deps.reports.write(input.errors_key, errorLines(deps.results.list(input.run_id), input.records, notApplied));
    summary.errors_key = input.errors_key;
  }
  return summary;
}

type Covered = BatchResult | { missing: { from: number; to: number } };

/** The results in line order, with the line ranges no result covers (a batch that failed for good). */
async function* withGaps(results: AsyncIterable<BatchResult>, records: number): AsyncGenerator<Covered> {
  let expected = 1;
  for await (const result of results) {
    if (result.last_line < expected) continue; // an older result for lines already covered
    // Line 1 is the header, checked before any batch ran: never reported as a row.
    if (result.first_line > Math.max(expected, 2)) yield { missing: { from: Math.max(expected, 2), to: result.first_line - 1 } };
    yield result;
    expected = result.last_line + 1;
  }
  if (Math.max(expected, 2) <= records) yield { missing: { from: Math.max(expected, 2), to: records } };
}

function notAppliedAs(reason: string): (line: number) => RowError {
  return (line) => ({ line, paymethod_token: '', reason });
}

const EOL = '\r\n';
const CHUNK_CHARS = 64 * 1024;

async function* errorLines(results: AsyncIterable<BatchResult>, records: number, notApplied: (line: number) => RowError): AsyncGenerator<string> {
  let chunk = `line,paymethod_token,reason${EOL}`;
  const add = (error: RowError) => {
    // The token is a well-formed mth_ token or '' (rows.ts): no sender's cell, so no formula, reaches the file.
    chunk += `${error.line},${error.paymethod_token},${csvField(error.reason)}${EOL}`;
  };
  for await (const item of withGaps(results, records)) {
    if ('missing' in item) for (let line = item.missing.from; line <= item.missing.to; line += 1) add(notApplied(line));
    else for (const error of item.errors) add(error);
    if (chunk.length >= CHUNK_CHARS) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}
