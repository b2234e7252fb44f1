/**
 * Adapters built once per container, on first use, so a function only builds
 * (and only needs configuration and grants for) what its route uses. Callers
 * mark `once(...)` pure, so bundling drops the adapters a handler never asks for.
 */
export function once<T>(build: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= build());
}
