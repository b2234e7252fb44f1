import { DomainError } from '#shared/domain/errors.ts';

/**
 * Prints a JSON result on stdout; errors go to stderr with a non-zero exit
 * code: as one JSON line when stderr is a file or a pipe (what scripts and
 * CI parse), as plain text on a terminal (what a person reads). A `Help`
 * thrown by `main` prints its text on stdout and exits 0.
 */
export async function runCli(main: () => Promise<unknown>, exitCodeFor: (error: unknown) => number | undefined = () => undefined): Promise<void> {
  try {
    const result = await main();
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } catch (error) {
    if (error instanceof Help) {
      process.stdout.write(`${error.message}\n`);
      return;
    }
    const body =
      error instanceof DomainError
        ? { error: error.code, message: error.message, ...(error.issues.length ? { errors: error.issues } : {}) }
        : { error: error instanceof UsageError ? 'USAGE' : 'FAILED', message: (error as Error).message };
    process.stderr.write(process.stderr.isTTY ? plainError(body) : `${JSON.stringify(body)}\n`);
    process.exitCode = exitCodeFor(error) ?? (error instanceof UsageError ? 2 : 1);
  }
}

/** The error as a person reads it: the message (its usage lines after it), then each failing field. */
export function plainError(body: { error: string; message: string; errors?: ReadonlyArray<{ field: string; message: string }> }): string {
  const fields = (body.errors ?? []).map((issue) => `  ${issue.field}: ${issue.message}\n`).join('');
  const label = body.error === 'USAGE' ? 'error' : `error (${body.error})`;
  return `${label}: ${body.message}\n${fields}`;
}

export class UsageError extends Error {}

/** Asked for help: the text goes to stdout and the command exits 0. */
export class Help extends Error {}
