/**
 * Which function made a call, for the local stand-ins of IAM's checks (the
 * DynamoDB gate, the KMS stand-in). In AWS a call carries the credentials of
 * its function's role; here every function runs in one process with the same
 * credentials, so each request to a checking endpoint is named, as Node
 * creates it and while the invocation's context is current, with the function
 * whose container that invocation runs in. Handlers know nothing of it; a
 * request made outside any invocation (the runtime's own, a CLI's) carries no
 * name.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { ClientRequest, IncomingMessage } from 'node:http';

const FUNCTION_HEADER = 'x-local-function';

/** The message of the log line each refused call writes, whichever stand-in refused it (the test suites look for it). */
export const REFUSED_CALL = 'a call its function is not granted was refused';
const REQUEST_CREATED = 'http.client.request.created';

/** Names every request to one of `hosts` (`host:port`) with the function running now; returns what stops it. */
export function nameCallingFunctions(hosts: readonly string[], currentFunction: () => string | undefined): () => void {
  const checked = new Set(hosts);
  const onRequestCreated = (message: unknown) => {
    const { request } = message as { request: ClientRequest };
    const host = request.getHeader('host');
    if (typeof host !== 'string' || !checked.has(host)) return;
    const name = currentFunction();
    if (name !== undefined) request.setHeader(FUNCTION_HEADER, name);
  };
  subscribe(REQUEST_CREATED, onRequestCreated);
  return () => unsubscribe(REQUEST_CREATED, onRequestCreated);
}

/** The function that made this request, if one did. */
export function callingFunction(req: IncomingMessage): string | undefined {
  const name = req.headers[FUNCTION_HEADER];
  return typeof name === 'string' ? name : undefined;
}

/** The request's headers without the name, to pass it on as it was sent. */
export function withoutCallerName(headers: IncomingMessage['headers']): Record<string, string | string[] | undefined> {
  const copy: Record<string, string | string[] | undefined> = { ...headers };
  delete copy[FUNCTION_HEADER];
  return copy;
}
