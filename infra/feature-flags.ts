/**
 * The feature flags the payments service is written and tested with: every
 * flag aws-cdk-lib recommends but `@aws-cdk/core:enableAdditionalMetadataCollection`
 * (docs/development.md, "Quiet synth and feature flags"), and the ones this
 * project turned on before. `PaymentsService` sets them on its own scope, so a
 * cloud team's app with other flags builds the same resources; cdk.json sets
 * the same values for this repository's app (test/infra/quiet-synth.test.ts
 * keeps the two equal).
 */
import * as cxapi from 'aws-cdk-lib/cx-api';

const DECLINED: Record<string, unknown> = { '@aws-cdk/core:enableAdditionalMetadataCollection': false };

const EARLIER: Record<string, unknown> = {
  '@aws-cdk/aws-lambda:recognizeLayerVersion': true,
  '@aws-cdk/core:checkSecretUsage': true,
  '@aws-cdk/aws-iam:minimizePolicies': true,
  '@aws-cdk/core:validateSnapshotRemovalPolicy': true,
  '@aws-cdk/aws-apigateway:disableCloudWatchRole': true,
  '@aws-cdk/core:enablePartitionLiterals': true,
  '@aws-cdk/aws-lambda-nodejs:useLatestRuntimeVersion': true,
  '@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy': true,
  '@aws-cdk/aws-kms:applyImportedAliasPermissionsToPrincipal': true,
  '@aws-cdk/aws-apigateway:authorizerChangeDeploymentLogicalId': true,
};

export const SERVICE_FEATURE_FLAGS: Readonly<Record<string, unknown>> = {
  ...EARLIER,
  ...(cxapi.CURRENTLY_RECOMMENDED_FLAGS as Record<string, unknown>),
  ...DECLINED,
};
