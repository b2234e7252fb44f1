/**
 * Which function made a call, for the local stand-ins of IAM's checks (the
 * DynamoDB and S3 gates, the KMS stand-in). In AWS a call carries the
 * credentials of its function's role; here every function runs in the
 * runtime's one process, each in its own container (shared/runtime/container.ts)
 * whose environment holds a signing credential of its own
 * (local/signing-credentials.ts), and the SDK signs each call with the
 * credential of the container it runs in (shared/aws/client-config.ts). So an
 * endpoint knows the caller by the access key id of a signature it verified:
 * a function cannot act as another, a presigned URL or form carries its
 * signer's grants, and a call signed with the operator's credential (the
 * runtime's own, a CLI's) is the operator's.
 */

/** The message of the log line each refused call writes, whichever stand-in refused it (the test suites look for it). */
export const REFUSED_CALL = 'a call its function is not granted was refused';
