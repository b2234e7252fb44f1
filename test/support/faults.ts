
/** A failure the service must treat as "dependency unavailable" (HTTP 503 from S3 or DynamoDB). */
export function serviceUnavailable(command: string): Error {
  return Object.assign(new Error(`${command} failed (injected)`), { name: 'ServiceUnavailable', $metadata: { httpStatusCode: 503 } });
}

/** A refusal the service answered (HTTP 400 throttling): the write certainly did not happen. */
export function throttled(command: string): Error {
  return Object.assign(new Error(`${command} throttled (injected)`), { name: 'ProvisionedThroughputExceededException', $metadata: { httpStatusCode: 400 } });
}

type CommandClass = { new (input: never): unknown; name: string };
/** `landed`: the request reaches the store and is applied, then its answer is lost (the error arrives instead). */
type Rule = { command: string; when?: (input: Record<string, unknown>) => boolean; error?: (command: string) => Error; landed?: boolean };

/**
 * Lets every listed command through to the real client (DynamoDB Local,
 * s3rver) except those matching a rule, which fail with a 503 (or the rule's error). Rules are
 * replaced per test with `failOn`.
 */
export function interpose(
  mock: { on(command: never): { callsFake(fn: (input: Record<string, unknown>, getClient: () => unknown) => unknown): unknown } },
  realSend: (this: unknown, command: unknown) => Promise<unknown>,
  commands: readonly CommandClass[],
) {
  let rules: Rule[] = [];
  const calls: Array<{ command: string; input: Record<string, unknown> }> = [];
  for (const Command of commands) {
    mock.on(Command as never).callsFake((input, getClient) => {
      calls.push({ command: Command.name, input });
      const rule = rules.find((candidate) => candidate.command === Command.name && (!candidate.when || candidate.when(input)));
      if (!rule) return realSend.call(getClient(), new Command(input as never));
      if (!rule.landed) throw (rule.error ?? serviceUnavailable)(Command.name);
      return realSend.call(getClient(), new Command(input as never)).then(() => {
        throw (rule.error ?? serviceUnavailable)(Command.name);
      });
    });
  }
  return {
    failOn(...next: Rule[]) {
      rules = next;
      calls.length = 0;
    },
    calls: (command: string) => calls.filter((call) => call.command === command),
  };
}
