/**
 * Which function made a call, for the local stand-ins of IAM's checks (the
 * DynamoDB and S3 gates, the KMS stand-in), which run in the runtime's own
 * process. In AWS a call carries the credentials of its function's role;
 * here every function runs in that one process with the same credentials. So
 * each request to a checking endpoint is attributed, as Node creates it and
 * while the invocation's context is current, to the function whose container
 * that invocation runs in, by its connection: the endpoint looks the caller up
 * by the connection's ports. Nothing is added to the request (its signature
 * and bytes stay as sent), and handlers know nothing of it. A request made
 * outside any invocation (the runtime's own, a CLI's, a client's presigned
 * POST) has no function.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { ClientRequest, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

const REQUEST_CREATED = 'http.client.request.created';

/** The message of the log line each refused call writes, whichever stand-in refused it (the test suites look for it). */
export const REFUSED_CALL = 'a call its function is not granted was refused';

/** The function whose request each open connection carries now, by `<client port>><server port>`. */
const callers = new Map<string, string>();
/** Connections whose end already clears their entry. */
const watched = new WeakSet<Socket>();
const connectionOf = (clientPort: number | undefined, serverPort: number | undefined) => `${clientPort}>${serverPort}`;

/** Attributes every request to one of `hosts` (`host:port`) to the function running now; returns what stops it. */
export function nameCallingFunctions(hosts: readonly string[], currentFunction: () => string | undefined): () => void {
  const checked = new Set(hosts);
  const onRequestCreated = (message: unknown) => {
    const { request } = message as { request: ClientRequest };
    const host = request.getHeader('host');
    if (typeof host !== 'string' || !checked.has(host)) return;
    const name = currentFunction();
    // A kept-alive connection carries one request at a time; each names its own caller before it is written.
    request.once('socket', (socket: Socket) => {
      const attribute = () => {
        const connection = connectionOf(socket.localPort, socket.remotePort);
        if (name === undefined) callers.delete(connection);
        else callers.set(connection, name);
        if (!watched.has(socket)) {
          watched.add(socket);
          socket.once('close', () => callers.delete(connection));
        }
      };
      if (socket.connecting) socket.once('connect', attribute);
      else attribute();
    });
  };
  subscribe(REQUEST_CREATED, onRequestCreated);
  return () => unsubscribe(REQUEST_CREATED, onRequestCreated);
}

/** The function that made this request, if one did. */
export function callingFunction(req: IncomingMessage): string | undefined {
  return callers.get(connectionOf(req.socket.remotePort, req.socket.localPort));
}
