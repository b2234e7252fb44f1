import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { StackProps } from 'aws-cdk-lib';
import { CfnAccount } from 'aws-cdk-lib/aws-apigateway';
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { NagSuppressions } from 'cdk-nag';
import { Construct } from 'constructs';

/** The stack name every environment of one account and region shares. */
export const ACCOUNT_SETTINGS_STACK_NAME = 'PaymentsApi-account';

/**
 * The region's API Gateway account setting: the CloudWatch Logs role that access
 * and execution logging need. It is one value per account and region, so it is
 * placed once, in a stack that every environment's stack depends on (here
 * `ApiGatewayAccountSettingsStack`; in a cloud team's app, wherever it keeps
 * account-wide settings, or nowhere if the platform already sets it).
 * Deploying dev, then prod, in one account deploys it once and never has two
 * stacks take the setting from each other (which `RestApi({ cloudWatchRole: true })`
 * in each environment's stack did).
 */
export class ApiGatewayAccountSettings extends Construct {
  readonly cloudWatchRole: Role;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.cloudWatchRole = new Role(this, 'CloudWatchRole', {
      assumedBy: new ServicePrincipal('apigateway.amazonaws.com'),
      managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('service-role/AmazonAPIGatewayPushToCloudWatchLogs')],
    });
    // The account setting outlives this stack (CloudFormation cannot unset it), so the
    // role it names must too, or every API in the region would lose its logs.
    this.cloudWatchRole.applyRemovalPolicy(RemovalPolicy.RETAIN);
    const account = new CfnAccount(this, 'Account', { cloudWatchRoleArn: this.cloudWatchRole.roleArn });
    account.applyRemovalPolicy(RemovalPolicy.RETAIN);

    NagSuppressions.addResourceSuppressions(this.cloudWatchRole, [{
      id: 'AwsSolutions-IAM4',
      reason:
        'AmazonAPIGatewayPushToCloudWatchLogs is the AWS managed policy for the region-wide API Gateway account setting that '
        + 'access and execution logging require; only apigateway.amazonaws.com can assume the role, and it can only write logs.',
      appliesTo: ['Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs'],
    }]);
  }
}

/** The account setting in a stack of its own, under the id `Default` (left out of logical ids: the ids it always had). */
export class ApiGatewayAccountSettingsStack extends Stack {
  readonly settings: ApiGatewayAccountSettings;
  readonly cloudWatchRole: Role;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, {
      description: 'Payments API: the region-wide API Gateway CloudWatch Logs role (one per account and region)',
      ...props,
    });
    this.settings = new ApiGatewayAccountSettings(this, 'Default');
    this.cloudWatchRole = this.settings.cloudWatchRole;
  }
}
