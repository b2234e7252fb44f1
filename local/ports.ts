import net from 'node:net';

/** The emulators' own key (s3rver knows only this one; DynamoDB Local takes any): used only between the runtime's gates and them, never by a caller. */
export const localCredentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

/** Every local server listens on loopback only: nothing `npm start` runs is reachable from the network. */
export const LOCAL_HOST = '127.0.0.1';

/**
 * Whether a Host header names this machine by a loopback name (`localhost`,
 * `127.0.0.1`, `[::1]`, with or without a port). Every local server listens on
 * loopback only, but a web page can still reach it by a name of its own that
 * resolves here (DNS rebinding): such a Host is never honoured.
 */
export function isLoopbackHost(host: string | undefined): boolean {
  return /^(?:localhost|127\.0\.0\.1|\[::1\])(?::\d{1,5})?$/i.test(host ?? '');
}

/**
 * Where each local server listens, all decided by PORT: the API (and the demo
 * checkout, which it serves) on PORT itself and the emulators on the next four
 * ports. PORT=0 gives every one a free port chosen by the system.
 */
export interface LocalPorts {
  api: number;
  dynamodb: number;
  s3: number;
  kms: number;
  paypal: number;
}

export const PORT_OFFSETS: Readonly<Record<keyof LocalPorts, number>> = { api: 0, dynamodb: 1, s3: 2, kms: 3, paypal: 4 };

export function localPorts(base: number): LocalPorts {
  const highest = Math.max(...Object.values(PORT_OFFSETS));
  if (!Number.isInteger(base) || base < 0 || base + highest > 65535) {
    throw new Error(`PORT must be 0 (all ports random) or a port from 1 to ${65535 - highest} (the API on PORT, the emulators on PORT+1 to PORT+${highest}); got ${base}`);
  }
  const at = (offset: number) => (base === 0 ? 0 : base + offset);
  return { api: at(PORT_OFFSETS.api), dynamodb: at(PORT_OFFSETS.dynamodb), s3: at(PORT_OFFSETS.s3), kms: at(PORT_OFFSETS.kms), paypal: at(PORT_OFFSETS.paypal) };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, LOCAL_HOST, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Fails with a message naming the variable when a fixed port is taken, before a server half-starts on it. */
export async function assertPortFree(port: number, what: string): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const server = net.createServer();
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new Error(`${what} needs ${LOCAL_HOST}:${port}, which is ${error.code === 'EADDRINUSE' ? 'in use' : `unavailable (${error.code})`}; choose another PORT (the API takes PORT, the emulators PORT+1 to PORT+4)`)),
    );
    server.listen(port, LOCAL_HOST, () => server.close(() => resolve()));
  });
}
