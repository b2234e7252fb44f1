import { Stack, Token } from 'aws-cdk-lib';
import type { ICertificate } from 'aws-cdk-lib/aws-certificatemanager';
import { CfnKey, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { IHostedZone } from 'aws-cdk-lib/aws-route53';
import type { Construct } from 'constructs';

/**
 * The API under a domain of the team's (docs/operations.md, "Custom domain"):
 * a REGIONAL API Gateway domain name with the REST API's own TLS policy and
 * endpoint access mode, mapped to the stage. Its target is output as
 * `CustomDomainTarget` (and `CustomDomainHostedZoneId`) for the team's DNS.
 */
export interface CustomDomainSettings {
  /** The host name clients call, e.g. `api.payments.example`. */
  readonly domainName: string;
  /** An ACM certificate for `domainName`, in the stack's region (a REGIONAL domain takes no other). */
  readonly certificate: ICertificate;
  /** Where the API sits on the domain: unset, at its root (`https://<domain>/v3/...`); `payments`, under `https://<domain>/payments/v3/...` (links in responses carry it). */
  readonly basePath?: string;
  /** A Route 53 public zone holding `domainName`: the service creates the A alias record there. Unset: point your DNS at the `CustomDomainTarget` output yourself. */
  readonly hostedZone?: IHostedZone;
}

/**
 * Keys the team brings instead of the ones the service creates, each optional
 * (docs/operations.md, "Bringing your own keys"). A key given here is used as
 * it is: the service creates no key of that kind and still grants each
 * function what the route and trigger tables declare, in the function's role
 * policy. Its key policy is the team's, and CDK cannot add to the policy of a
 * key imported by ARN: that policy must let the service's roles use the key
 * (or delegate to IAM). Spec and usage are checked at synth for a key defined
 * in the same app; for an imported key CDK cannot see them (the table in the
 * document says which each must be).
 */
export interface ServiceKeys {
  /** Symmetric encryption: wraps account-number data keys and encrypts the documents bucket. */
  readonly vault?: IKey;
  /** HMAC_256, GENERATE_VERIFY_MAC: the keyed hash of API secure keys (the admin CLI's credential issuers need kms:GenerateMac on it). */
  readonly credentialMac?: IKey;
  /** HMAC_256, GENERATE_VERIFY_MAC: derives each organization's paymethod fingerprint key. Never share it with `credentialMac` or `requestHash`. */
  readonly fingerprint?: IKey;
  /** HMAC_256, GENERATE_VERIFY_MAC: the keyed hash of Idempotency-Key requests. */
  readonly requestHash?: IKey;
  /** Symmetric encryption: the Account Updater's reports bucket (update files hold card numbers in the clear). */
  readonly reports?: IKey;
  /** Symmetric encryption: the Account Updater state machine's data and logs; Step Functions and CloudWatch Logs delivery use it. */
  readonly stateMachine?: IKey;
  /** Symmetric encryption: the alarm topic the service creates (CloudWatch alarms of this account must be able to use it). Not with `alarmTopic`: your topic is encrypted as you set it. */
  readonly alarmTopic?: IKey;
}

/**
 * Malware scanning of stored documents (docs/documents.md). Whatever is set,
 * the bucket policy's scan gate stays: no stored file is read until its
 * `GuardDutyMalwareScanStatus` tag says `NO_THREATS_FOUND`.
 */
export interface ScanningSettings {
  /**
   * The GuardDuty Malware Protection plan on the documents bucket (default
   * true). False: no plan and no GuardDuty role; your own scanner
   * (`scannerRoleArns`) must write the same tag and put the same result event
   * (`resultEventSource`), or no document is ever served.
   */
  readonly malwareProtectionPlan?: boolean;
  /** With the plan off, required: the IAM role ARNs of your scanner. The scan gate lets them read unscanned files, and the bucket and vault key policies let them read, tag and decrypt (through S3) the stored files; the bucket then sends Object Created events to EventBridge for it. */
  readonly scannerRoleArns?: readonly string[];
  /** With the plan off, required: the `source` of your scanner's result events on the account's default bus, each with GuardDuty's detail-type and detail shape ("GuardDuty Malware Protection Object Scan Result"; EventBridge refuses `aws.` sources from PutEvents). */
  readonly resultEventSource?: string;
}

/**
 * How stored documents are kept (docs/documents.md, "What a retained file
 * costs to keep"). How long they are kept is the contract's, not a setting.
 */
export interface DocumentStorageSettings {
  /**
   * Days after which a stored file over 128 KiB moves to S3 Glacier Instant
   * Retrieval (default 30): downloads stay immediate, each billed per GB
   * retrieved. Later suits a team whose disputes read their files for months;
   * `false` keeps every file in S3 Standard.
   */
  readonly archiveAfterDays?: number | false;
}

/** The Glacier IR transition unless `documentStorage.archiveAfterDays` says otherwise. */
export const DEFAULT_ARCHIVE_AFTER_DAYS = 30;

/** The transition's days, or false for none; refuses what S3 would. */
export function archiveAfterDays(settings: DocumentStorageSettings = {}): number | false {
  const days = settings.archiveAfterDays ?? DEFAULT_ARCHIVE_AFTER_DAYS;
  if (days !== false && (!Number.isInteger(days) || days < 1)) throw new Error(`documentStorage.archiveAfterDays: ${days} is not a whole number of days, at least 1 (or false)`);
  return days;
}

/** What each key must be (KMS cannot change a key's spec or usage after creation). */
export const SERVICE_KEY_SPECS: Readonly<Record<keyof ServiceKeys, { readonly keySpec: KeySpec; readonly keyUsage: KeyUsage }>> = {
  vault: { keySpec: KeySpec.SYMMETRIC_DEFAULT, keyUsage: KeyUsage.ENCRYPT_DECRYPT },
  credentialMac: { keySpec: KeySpec.HMAC_256, keyUsage: KeyUsage.GENERATE_VERIFY_MAC },
  fingerprint: { keySpec: KeySpec.HMAC_256, keyUsage: KeyUsage.GENERATE_VERIFY_MAC },
  requestHash: { keySpec: KeySpec.HMAC_256, keyUsage: KeyUsage.GENERATE_VERIFY_MAC },
  reports: { keySpec: KeySpec.SYMMETRIC_DEFAULT, keyUsage: KeyUsage.ENCRYPT_DECRYPT },
  stateMachine: { keySpec: KeySpec.SYMMETRIC_DEFAULT, keyUsage: KeyUsage.ENCRYPT_DECRYPT },
  alarmTopic: { keySpec: KeySpec.SYMMETRIC_DEFAULT, keyUsage: KeyUsage.ENCRYPT_DECRYPT },
};

/**
 * Refuses, at synth, what CDK can see is wrong with the keys given: a key of
 * this app whose spec or usage is not the one its use needs, an ARN that names
 * an alias (the documents bucket's policy compares key ARNs, and key policies
 * name keys), one key given for two uses, or a key of another region. A key
 * imported by ARN shows none of its spec: KMS refuses the first call instead.
 */
export function validateServiceKeys(scope: Construct, keys: ServiceKeys): void {
  const region = Stack.of(scope).region;
  const seen = new Map<IKey, string>();
  for (const [use, key] of Object.entries(keys) as Array<[keyof ServiceKeys, IKey | undefined]>) {
    if (!key) continue;
    const other = seen.get(key);
    if (other) throw new Error(`keys.${use}: the same key as keys.${other}; each use needs a key of its own (docs/operations.md, "Bringing your own keys")`);
    seen.set(key, use);
    const expected = SERVICE_KEY_SPECS[use];
    const cfn = key.node.defaultChild;
    if (cfn instanceof CfnKey) {
      const keySpec = (cfn.keySpec as string | undefined) ?? KeySpec.SYMMETRIC_DEFAULT;
      const keyUsage = (cfn.keyUsage as string | undefined) ?? KeyUsage.ENCRYPT_DECRYPT;
      if (keySpec !== expected.keySpec || keyUsage !== expected.keyUsage) {
        throw new Error(`keys.${use}: a ${keySpec} key for ${keyUsage}; it must be ${expected.keySpec} for ${expected.keyUsage}`);
      }
      continue;
    }
    if (Token.isUnresolved(key.keyArn)) continue;
    const arn = /^arn:aws[a-z-]*:kms:([a-z0-9-]+):\d{12}:(key|alias)\/.+$/.exec(key.keyArn);
    if (!arn) throw new Error(`keys.${use}: "${key.keyArn}" is not a KMS key ARN`);
    if (arn[2] === 'alias') throw new Error(`keys.${use}: "${key.keyArn}" names an alias; give the key's own ARN (key/<id>)`);
    if (!Token.isUnresolved(region) && arn[1] !== region) throw new Error(`keys.${use}: the key is in ${arn[1]}, the stack in ${region}`);
  }
}

/** Scanning settings with their defaults, checked together. */
export interface ResolvedScanning {
  readonly malwareProtectionPlan: boolean;
  readonly scannerRoleArns: readonly string[];
  readonly resultEventSource?: string;
}

const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/.+$/;

/** Refuses a plan that is off with no scanner to take its place, and scanner settings the plan would ignore. */
export function validateScanning(settings: ScanningSettings): ResolvedScanning {
  const plan = settings.malwareProtectionPlan ?? true;
  const scannerRoleArns = settings.scannerRoleArns ?? [];
  if (plan) {
    if (scannerRoleArns.length || settings.resultEventSource !== undefined) {
      throw new Error('scanning.scannerRoleArns and scanning.resultEventSource are for a scanner of your own: set scanning.malwareProtectionPlan to false with them');
    }
    return { malwareProtectionPlan: true, scannerRoleArns: [] };
  }
  if (!scannerRoleArns.length) {
    throw new Error('scanning.malwareProtectionPlan is false: name your scanner\'s roles in scanning.scannerRoleArns; the bucket policy serves no stored file until a scanner tags it clean');
  }
  for (const arn of scannerRoleArns) {
    if (!Token.isUnresolved(arn) && !ROLE_ARN.test(arn)) throw new Error(`scanning.scannerRoleArns: "${arn}" is not an IAM role ARN`);
  }
  const source = settings.resultEventSource;
  if (source === undefined || source === '' || source.startsWith('aws.')) {
    throw new Error('scanning.malwareProtectionPlan is false: scanning.resultEventSource must name the source of your scanner\'s result events (not aws.*, which EventBridge keeps for AWS services)');
  }
  return { malwareProtectionPlan: false, scannerRoleArns, resultEventSource: source };
}
