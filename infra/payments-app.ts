import { Aspects } from 'aws-cdk-lib';
import type { App } from 'aws-cdk-lib';
import { Schedule } from 'aws-cdk-lib/aws-events';
import { ACCOUNT_SETTINGS_STACK_NAME, ApiGatewayAccountSettingsStack } from './account-settings.ts';
import { environmentSettings } from './environments.ts';
import { PlatformRules } from './platform-rules.ts';
import { PaymentsApiStack } from './stack.ts';
import type { PaymentsApiStackProps } from './stack.ts';

export interface PaymentsApp {
  readonly api: PaymentsApiStack;
  /** Absent with `-c apiGatewayAccountSettings=external`. */
  readonly accountSettings?: ApiGatewayAccountSettingsStack;
}

/**
 * The stacks `cdk synth|deploy -c environment=<name>` defines: the environment's
 * API stack and the account-settings stack it depends on. `props` is for tests
 * (fixture routes and functions).
 */
export function definePaymentsApp(app: App, props: Omit<PaymentsApiStackProps, 'environment' | 'env'> = {}): PaymentsApp {
  const context = (key: string): string | undefined => {
    const value = app.node.tryGetContext(key) as unknown;
    return typeof value === 'string' && value !== '' ? value : undefined;
  };
  const environment = environmentSettings(context('environment') ?? 'dev', app.node.tryGetContext('environments'), {
    alarmEmail: context('alarmEmail'),
  });
  // Without credentials the CLI leaves CDK_DEFAULT_ACCOUNT unset: synthesize an
  // environment-agnostic template instead of failing, so synth works offline.
  const env = process.env.CDK_DEFAULT_ACCOUNT
    ? { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION }
    : undefined;

  // The Account Updater's export schedule: a prop of the service, set here from `-c auExportSchedule=<expression>`.
  const exportSchedule = context('auExportSchedule');
  const api = new PaymentsApiStack(app, `PaymentsApi-${environment.name}`, {
    ...(exportSchedule ? { accountUpdaterExportSchedule: Schedule.expression(exportSchedule) } : {}),
    ...props,
    environment,
    env,
  });
  // The platform group's rules (encryption, public access, logging, retention) on every stack: a breach stops synth.
  Aspects.of(app).add(new PlatformRules());

  // The region's API Gateway logging role is an account setting: one stack owns it, and every
  // environment's stack depends on it (so `cdk deploy PaymentsApi-<env>` deploys it first, once;
  // the second environment finds it unchanged). `-c apiGatewayAccountSettings=external` where the
  // platform team already manages that setting.
  const accountSettings = context('apiGatewayAccountSettings') ?? 'stack';
  if (accountSettings !== 'stack' && accountSettings !== 'external') {
    throw new Error(`apiGatewayAccountSettings must be "stack" or "external", not "${accountSettings}"`);
  }
  if (accountSettings === 'external') return { api };
  const settingsStack = new ApiGatewayAccountSettingsStack(app, ACCOUNT_SETTINGS_STACK_NAME, { env });
  api.addStackDependency(settingsStack);
  return { api, accountSettings: settingsStack };
}
