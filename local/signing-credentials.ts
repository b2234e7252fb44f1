/**
 * The credentials every local endpoint that holds data checks signatures
 * against (local/sigv4.ts), made afresh at each start: one for the operator
 * (the runtime itself and the CLIs, which read it from the 0600 runtime file)
 * and one per function, as each Lambda function signs with its own role's
 * credentials. A gate knows a caller by the access key id its valid signature
 * names, so a function cannot act as another, and anyone on the host without
 * the runtime file cannot act at all.
 */
import { randomBytes } from 'node:crypto';

export interface SigningCredential {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/** Who signed: the operator, or one function (by its handler name). */
export type Principal = { readonly kind: 'operator' } | { readonly kind: 'function'; readonly name: string };

export interface LocalSigningCredentials {
  readonly operator: SigningCredential;
  /** The function's own credential; throws for a function the runtime does not host. */
  forFunction(name: string): SigningCredential;
  /** The principal and secret an access key id belongs to, if any. */
  lookup(accessKeyId: string): { principal: Principal; secretAccessKey: string } | undefined;
}

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** An access key id shaped like IAM's (`AKIA` and 16 characters), 80 random bits. */
function accessKeyId(): string {
  return `AKIA${[...randomBytes(16)].map((byte) => BASE32[byte % 32]).join('')}`;
}

function credential(): SigningCredential {
  return { accessKeyId: accessKeyId(), secretAccessKey: randomBytes(30).toString('base64') };
}

export function generateSigningCredentials(functionNames: Iterable<string>): LocalSigningCredentials {
  const operator = credential();
  const functions = new Map([...new Set(functionNames)].map((name) => [name, credential()]));
  const byKeyId = new Map<string, { principal: Principal; secretAccessKey: string }>([
    [operator.accessKeyId, { principal: { kind: 'operator' }, secretAccessKey: operator.secretAccessKey }],
    ...[...functions].map(([name, { accessKeyId: id, secretAccessKey }]) => [id, { principal: { kind: 'function', name } as Principal, secretAccessKey }] as const),
  ]);
  return {
    operator,
    forFunction(name) {
      const found = functions.get(name);
      if (!found) throw new Error(`no signing credential for function ${name}`);
      return found;
    },
    lookup: (id) => byKeyId.get(id),
  };
}

/** The name refusal logs give a principal (a function's role session, or the operator). */
export function principalName(principal: Principal): string {
  return principal.kind === 'function' ? principal.name : 'operator';
}
