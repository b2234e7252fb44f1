import { App } from 'aws-cdk-lib';
import { environmentSettings } from './environments.ts';
import { PaymentsApiStack } from './stack.ts';

const app = new App();
const environment = environmentSettings(String(app.node.tryGetContext('environment') ?? 'dev'));

new PaymentsApiStack(app, `PaymentsApi-${environment.name}`, {
  environment,
  // Without credentials the CLI leaves CDK_DEFAULT_ACCOUNT unset: synthesize an
  // environment-agnostic template instead of failing, so synth works offline.
  env: process.env.CDK_DEFAULT_ACCOUNT
    ? { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION }
    : undefined,
});
