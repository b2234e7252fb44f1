import { currentContainer } from '#shared/runtime/container.ts';

/**
 * The one way adapters are built: once per function container, on first use,
 * so a function only builds (and only needs configuration and grants for) what
 * its route uses. Handlers call the getter inside the handler, never at module
 * scope. Callers mark `once(...)` pure, so bundling drops the adapters a
 * handler never asks for.
 */
export function once<T>(build: () => T): () => T {
  return () => {
    const { built } = currentContainer();
    if (!built.has(build)) built.set(build, build());
    return built.get(build) as T;
  };
}
