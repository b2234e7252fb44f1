/**
 * Progress of a long command on standard error: a bar redrawn in place when
 * stderr is a terminal, a plain line every few seconds when it is a file or a
 * pipe (a CI log, `2> run.log`), so either reader sees rows done, the rate,
 * errors so far and the time left. Standard output is left to the result.
 */
export interface ProgressState {
  done: number;
  total: number;
  errors: number;
  elapsedMs: number;
}

/** How often a line is written when stderr is not a terminal. */
export const LINE_INTERVAL_MS = 5_000;
/** How often the bar is redrawn on a terminal. */
const BAR_INTERVAL_MS = 200;
const BAR_WIDTH = 24;

const count = (value: number) => value.toLocaleString('en-US');

/** `1h 02m`, `3m 05s`, `42s`. */
export function duration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  const [h, m, s] = [Math.floor(seconds / 3600), Math.floor((seconds % 3600) / 60), seconds % 60];
  if (h > 0) return `${h}h ${String(m).padStart(2, '0')}m`;
  if (m > 0) return `${m}m ${String(s).padStart(2, '0')}s`;
  return `${s}s`;
}

/** `40,000/100,000 rows (40%), 812 rows/s, 12 errors, 49s in, about 1m 14s left`. */
export function progressText({ done, total, errors, elapsedMs }: ProgressState): string {
  const rate = elapsedMs > 0 ? (done * 1000) / elapsedMs : 0;
  const percent = total > 0 ? Math.floor((done * 100) / total) : 0;
  const left = rate > 0 && done < total ? `about ${duration(((total - done) * 1000) / rate)} left` : done >= total ? 'done' : 'estimating time left';
  // The time so far: until the first batch ends, the only part of the line that moves.
  return `${count(done)}/${count(total)} rows (${percent}%), ${count(Math.round(rate))} rows/s, ${count(errors)} error${errors === 1 ? '' : 's'}, ${duration(elapsedMs)} in, ${left}`;
}

/** `[#########---------------] 40,000/100,000 rows ...` */
export function progressBar(state: ProgressState): string {
  const filled = state.total > 0 ? Math.min(BAR_WIDTH, Math.floor((state.done * BAR_WIDTH) / state.total)) : 0;
  return `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${progressText(state)}`;
}

export interface ProgressOutput {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface ProgressReporter {
  start(total: number): void;
  add(rows: number, errors: number): void;
  /** Writes the last state (the bar's final frame, or a last line) and stops the timer. */
  finish(): void;
}

export function progressReporter(output: ProgressOutput, now: () => number = Date.now): ProgressReporter {
  const terminal = output.isTTY === true;
  const interval = terminal ? BAR_INTERVAL_MS : LINE_INTERVAL_MS;
  const state = { done: 0, total: 0, errors: 0, startedAt: now() };
  let started = false;
  let lastWrite = 0;
  let doneAtLastWrite = -1;
  let timer: NodeJS.Timeout | undefined;
  const snapshot = (): ProgressState => ({ done: state.done, total: state.total, errors: state.errors, elapsedMs: now() - state.startedAt });
  const write = () => {
    lastWrite = now();
    doneAtLastWrite = state.done;
    // \r and erase-to-end-of-line redraw the bar in place; a file gets whole lines.
    output.write(terminal ? `\r${progressBar(snapshot())}\u001b[K` : `${progressText(snapshot())}\n`);
  };
  return {
    start(total) {
      state.total = total;
      state.startedAt = now();
      started = true;
      write();
      // A line also when no batch ends for a while, so a slow run still shows it is alive.
      timer = setInterval(() => {
        if (now() - lastWrite >= interval) write();
      }, interval);
      timer.unref();
    },
    add(rows, errors) {
      state.done += rows;
      state.errors += errors;
      if (started && now() - lastWrite >= interval) write();
    },
    finish() {
      if (timer) clearInterval(timer);
      if (!started) return;
      // The bar's last frame; a line only when it would say something the last one did not.
      if (terminal || state.done !== doneAtLastWrite) write();
      if (terminal) output.write('\n');
    },
  };
}
