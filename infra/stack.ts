import { CfnOutput, Duration, Stack } from 'aws-cdk-lib';
import type { StackProps } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { routes as routeTable } from '#shared/http/routes.ts';
import type { RouteDefinition } from '#shared/http/routes.ts';
import { AccountUpdater } from './account-updater.ts';
import { PaymentsRestApi } from './api.ts';
import type { EnvironmentSettings } from './environments.ts';

export interface PaymentsApiStackProps extends StackProps {
  readonly environment: EnvironmentSettings;
  /** Default: the route table. */
  readonly routes?: readonly RouteDefinition[];
  /** Default: `<repo>/functions`. */
  readonly functionsDir?: string;
}

const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));
const GSI_NAMES = ['gsi1', 'gsi2', 'gsi3'];

export class PaymentsApiStack extends Stack {
  constructor(scope: Construct, id: string, props: PaymentsApiStackProps) {
    super(scope, id, props);
    const { environment } = props;

    const table = createTable(this, environment);
    const vaultKey = new Key(this, 'VaultKey', {
      description: `Payments ${environment.name}: wraps account-number data keys and encrypts documents`,
      enableKeyRotation: true,
      removalPolicy: environment.removalPolicy,
    });
    const credentialMacKey = new Key(this, 'CredentialMacKey', {
      description: `Payments ${environment.name}: keyed hash of API secure keys`,
      keySpec: KeySpec.HMAC_256,
      keyUsage: KeyUsage.GENERATE_VERIFY_MAC,
      // KMS rotates symmetric encryption keys only; and a MAC names no key version, so new key
      // material would invalidate every stored hash. Rotating means issuing new credentials.
      enableKeyRotation: false,
      removalPolicy: environment.removalPolicy,
    });
    const documents = createDocumentsBucket(this, environment, vaultKey);

    const { api } = new PaymentsRestApi(this, 'Api', {
      environment,
      routes: props.routes ?? routeTable,
      functionsDir: props.functionsDir ?? join(PROJECT_ROOT, 'functions'),
      projectRoot: PROJECT_ROOT,
      resources: { table, documents, vaultKey },
      credentialMacKey,
    });

    const accountUpdater = new AccountUpdater(this, 'AccountUpdater', { environment, projectRoot: PROJECT_ROOT, functionsDir: props.functionsDir ?? join(PROJECT_ROOT, 'functions'), table, vaultKey });

    // Plain outputs, no exports: CLIs read them with DescribeStacks.
    output(this, 'ApiUrl', api.url, 'Stage URL; routes live under <ApiUrl>v3/');
    output(this, 'TableName', table.tableName);
    output(this, 'DocumentsBucketName', documents.bucketName);
    output(this, 'ReportsBucketName', accountUpdater.reports.bucketName);
    output(this, 'VaultKeyId', vaultKey.keyId);
    output(this, 'CredentialMacKeyId', credentialMacKey.keyId);
    output(this, 'EnvironmentName', environment.responseEnvironment, 'response.environment (ENVIRONMENT_NAME)');
  }
}

/**
 * AWS managed encryption: account numbers are already envelope-encrypted with the
 * vault key before they reach the table, so a customer key here would add KMS
 * grants to every function and cost per request without protecting more; key use
 * still shows in CloudTrail, unlike the AWS owned default.
 */
function createTable(scope: Construct, environment: EnvironmentSettings): Table {
  const table = new Table(scope, 'Table', {
    partitionKey: { name: 'pk', type: AttributeType.STRING },
    sortKey: { name: 'sk', type: AttributeType.STRING },
    billingMode: BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    timeToLiveAttribute: 'expires_at',
    encryption: TableEncryption.AWS_MANAGED,
    deletionProtection: environment.deletionProtection,
    removalPolicy: environment.removalPolicy,
  });
  for (const indexName of GSI_NAMES) {
    table.addGlobalSecondaryIndex({
      indexName,
      partitionKey: { name: `${indexName}pk`, type: AttributeType.STRING },
      sortKey: { name: `${indexName}sk`, type: AttributeType.STRING },
      projectionType: ProjectionType.ALL,
    });
  }
  return table;
}

function createDocumentsBucket(scope: Construct, environment: EnvironmentSettings, key: Key): Bucket {
  return new Bucket(scope, 'DocumentsBucket', {
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
    encryption: BucketEncryption.KMS,
    encryptionKey: key,
    // S3 derives object keys from a short-lived bucket key instead of calling KMS for each object.
    bucketKeyEnabled: true,
    enforceSSL: true,
    versioned: true,
    lifecycleRules: [{
      // A deleted document must not live on as an old version.
      noncurrentVersionExpiration: Duration.days(30),
      abortIncompleteMultipartUploadAfter: Duration.days(1),
    }],
    removalPolicy: environment.removalPolicy,
  });
}

function output(scope: Construct, id: string, value: string, description?: string): void {
  new CfnOutput(scope, id, { value, description });
}
