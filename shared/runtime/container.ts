import { AsyncLocalStorage } from 'node:async_hooks';

/** A function's environment variables, as Lambda hands them to its process. */
export type Environment = Readonly<Record<string, string | undefined>>;

/**
 * What one Lambda function's container holds: its environment and the adapters
 * built in it (see wiring/once.ts). In AWS every function runs in its own
 * process, so the process is the container and its environment is
 * `process.env`. The local runtime runs every function in one process; it runs
 * each invocation inside that function's own container (`runInContainer`), so
 * a handler sees exactly the variables CDK gives its function and builds its
 * own adapters, as it would in AWS. Handlers never know which it is.
 */
export interface FunctionContainer {
  readonly environment: Environment;
  /** Values built once per container, keyed by their builder. */
  readonly built: Map<object, unknown>;
}

export function functionContainer(environment: Environment): FunctionContainer {
  return { environment: Object.freeze({ ...environment }), built: new Map() };
}

const invocations = new AsyncLocalStorage<FunctionContainer>();
let processContainer: FunctionContainer | undefined;

/** The container of the code running now. */
export function currentContainer(): FunctionContainer {
  return invocations.getStore() ?? (processContainer ??= { environment: process.env, built: new Map() });
}

/** Runs `invoke` (and everything it starts) inside `container`. */
export function runInContainer<R>(container: FunctionContainer, invoke: () => R): R {
  return invocations.run(container, invoke);
}
