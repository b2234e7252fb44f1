/**
 * What a first `cdk deploy` in a fresh account needs, and what a second
 * environment in the same account must not disturb.
 */
import { App, Aspects } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ACCOUNT_SETTINGS_STACK_NAME, ApiGatewayAccountSettingsStack } from '#infra/account-settings.ts';
import { definePaymentsApp } from '#infra/payments-app.ts';
import { PAYPAL_UNSET_CLIENT_ID, parsePaypalSecret } from '#shared/platform/paypal-secret.ts';
import { fixtureRoutes } from './fixtures/routes.ts';
import { deployedTemplate, resourcesOfType } from './template-helpers.ts';

const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> };
const functionsDir = fileURLToPath(new URL('./fixtures/functions', import.meta.url));
const SYNTH_TIMEOUT_MS = 60_000;

function synthesizeApp(context: Record<string, string>) {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [], ...context } });
  const stacks = definePaymentsApp(app, { routes: fixtureRoutes, functionsDir });
  return {
    // The environment's stack with its nested stacks: no resource of any of them may touch the account setting.
    api: deployedTemplate(stacks.api),
    apiStack: stacks.api,
    accountSettings: stacks.accountSettings ? Template.fromStack(stacks.accountSettings) : undefined,
  };
}

describe('dev and prod in one account', () => {
  const dev = synthesizeApp({ environment: 'dev' });
  const prod = synthesizeApp({ environment: 'prod' });

  it('leaves the API Gateway account setting to one shared stack that both environments depend on', () => {
    for (const { api, apiStack } of [dev, prod]) {
      // No environment stack touches the account setting or creates a logging role for it.
      expect(resourcesOfType(api, 'AWS::ApiGateway::Account')).toEqual({});
      expect(apiStack.dependencies.map((stack) => stack.stackName)).toEqual([ACCOUNT_SETTINGS_STACK_NAME]);
    }
    // Deploying the second environment finds the settings stack unchanged: the same template.
    expect(dev.accountSettings!.toJSON()).toEqual(prod.accountSettings!.toJSON());
    dev.accountSettings!.resourceCountIs('AWS::ApiGateway::Account', 1);
    dev.accountSettings!.hasResource('AWS::ApiGateway::Account', { DeletionPolicy: 'Retain' });
    dev.accountSettings!.hasResource('AWS::IAM::Role', {
      DeletionPolicy: 'Retain',
      Properties: Match.objectLike({
        AssumeRolePolicyDocument: Match.objectLike({
          Statement: [Match.objectLike({ Principal: { Service: 'apigateway.amazonaws.com' } })],
        }),
      }),
    });
  }, SYNTH_TIMEOUT_MS);

  it('passes cdk-nag (AwsSolutions) with only the managed-policy finding suppressed', () => {
    const app = new App();
    const stack = new ApiGatewayAccountSettingsStack(app, ACCOUNT_SETTINGS_STACK_NAME);
    Aspects.of(stack).add(new AwsSolutionsChecks());
    app.synth();
    const annotations = Annotations.fromStack(stack);
    expect([
      ...annotations.findError('*', Match.stringLikeRegexp('AwsSolutions-.*')),
      ...annotations.findWarning('*', Match.stringLikeRegexp('AwsSolutions-.*')),
    ]).toEqual([]);
  });

  it('defines no settings stack where the platform team owns the setting', () => {
    const external = synthesizeApp({ environment: 'dev', apiGatewayAccountSettings: 'external' });
    expect(external.accountSettings).toBeUndefined();
    expect(external.apiStack.dependencies).toEqual([]);
    expect(() => synthesizeApp({ environment: 'dev', apiGatewayAccountSettings: 'mine' })).toThrow(/"stack" or "external"/);
  }, SYNTH_TIMEOUT_MS);

  it('creates the PayPal secret in its JSON shape, never rewritten by a deploy, and names it in an output', () => {
    const secrets = Object.entries(resourcesOfType(dev.api, 'AWS::SecretsManager::Secret'));
    expect(secrets).toHaveLength(1);
    const [secretId, secret] = secrets[0]!;
    expect(secret.Properties.SecretString).toBeUndefined();
    expect(secret.Properties.GenerateSecretString).toEqual({
      SecretStringTemplate: JSON.stringify({ client_id: PAYPAL_UNSET_CLIENT_ID }),
      GenerateStringKey: 'client_secret',
      ExcludePunctuation: true,
    });
    dev.api.hasOutput('PaypalSecretArn', { Value: { Ref: secretId } });
  }, SYNTH_TIMEOUT_MS);
});

describe('the PayPal secret as the functions read it', () => {
  it('treats the stack placeholder and other shapes as not configured', () => {
    expect(parsePaypalSecret(JSON.stringify({ client_id: PAYPAL_UNSET_CLIENT_ID, client_secret: 'generated' }))).toBeUndefined();
    expect(parsePaypalSecret('not json')).toBeUndefined();
    expect(parsePaypalSecret(undefined)).toBeUndefined();
    expect(parsePaypalSecret(JSON.stringify({ client_id: 'AXy', client_secret: '' }))).toBeUndefined();
    expect(parsePaypalSecret(JSON.stringify(['AXy', 'secret']))).toBeUndefined();
    expect(parsePaypalSecret(JSON.stringify({ client_id: 'AXy', client_secret: 'EKz' }))).toEqual({ client_id: 'AXy', client_secret: 'EKz' });
  });
});
