import { DomainError } from '#shared/domain/errors.ts';

/** Prints a JSON result on stdout; errors go to stderr as JSON with a non-zero exit code. */
export async function runCli(main: () => Promise<unknown>, exitCodeFor: (error: unknown) => number | undefined = () => undefined): Promise<void> {
  try {
    const result = await main();
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } catch (error) {
    const body =
      error instanceof DomainError
        ? { error: error.code, message: error.message, ...(error.issues.length ? { errors: error.issues } : {}) }
        : { error: error instanceof UsageError ? 'USAGE' : 'FAILED', message: (error as Error).message };
    process.stderr.write(`${JSON.stringify(body)}\n`);
    process.exitCode = exitCodeFor(error) ?? (error instanceof UsageError ? 2 : 1);
  }
}

export class UsageError extends Error {}
