/**
 * Which function made a call, and what it may do: the local stand-in of IAM's
 * checks, one path for every gate (DynamoDB, S3, KMS). In AWS a call carries
 * the credentials of its function's role; here every function runs in the
 * runtime's one process, each in its own container (shared/runtime/container.ts)
 * whose environment holds a signing credential of its own
 * (local/signing-credentials.ts), and the SDK signs each call with the
 * credential of the container it runs in (shared/aws/client-config.ts). So an
 * endpoint knows the caller by the access key id of a signature it verified:
 * a function cannot act as another, a presigned URL or form carries its
 * signer's grants, and a call signed with the operator's credential (the
 * runtime's own, a CLI's) is the operator's. What a function may do is its
 * grants (shared/platform/*-grants.ts, the same data CDK turns into its
 * policies); each gate reads a request as the actions IAM would check.
 */
import type { Principal } from './signing-credentials.ts';
import { principalName } from './signing-credentials.ts';
import { LOCAL_ACCOUNT_ID } from './lambda-context.ts';

/** The message of the log line each refused call writes, whichever gate refused it (the test suites look for it). */
export const REFUSED_CALL = 'a call its function is not granted was refused';

/** Each function's grants, and which granted resource each resource name is (any other name is granted to nobody). */
export interface GrantedResources<Resource extends string, Grant> {
  readonly resources: Readonly<Record<string, Resource>>;
  readonly functions: ReadonlyMap<string, readonly Grant[]>;
}

/** The grants a call is held to: its function's (none if it has none), or undefined for the operator, who may do anything. */
export function grantsOf<Grant>(principal: Principal, functions: ReadonlyMap<string, readonly Grant[]>): readonly Grant[] | undefined {
  return principal.kind === 'operator' ? undefined : (functions.get(principal.name) ?? []);
}

/** The log line of a refused call: an error whatever the access log's setting, as the call would fail in AWS. */
export function logRefusal(log: (line: Record<string, unknown>) => void, service: string, principal: Principal, call: Record<string, unknown>): void {
  log({ level: 'ERROR', message: REFUSED_CALL, service, function: principalName(principal), ...call });
}

/** As IAM words a call of an assumed role that no policy allows (`action` with its service prefix, `dynamodb:GetItem`). */
export function notAuthorized(principal: Principal, action: string, resource: string): string {
  const role = principalName(principal);
  return `User: arn:aws:sts::${LOCAL_ACCOUNT_ID}:assumed-role/${role}/${role} is not authorized to perform: ${action} on resource: ${resource} because no identity-based policy allows the ${action} action`;
}
