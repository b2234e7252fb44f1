/**
 * The package's entry point, for a cloud team's own CDK app
 * (docs/operations.md, "Use it from your own CDK app"): the service construct,
 * the account setting placed once per account and region, the validation of
 * environment settings, and the platform rules.
 */
export { PaymentsService } from './stack.ts';
export type { PaymentsServiceProps } from './stack.ts';
export { DEFAULT_ARCHIVE_AFTER_DAYS, SERVICE_KEY_SPECS } from './service-props.ts';
export type { CustomDomainSettings, DocumentStorageSettings, ScanningSettings, ServiceKeys } from './service-props.ts';
export { ApiGatewayAccountSettings } from './account-settings.ts';
export { environmentSettings, DEFAULT_WEB_ACL, DEFAULT_ACCOUNT_CONCURRENCY_LIMIT, UNRESERVED_CONCURRENCY_MINIMUM } from './environments.ts';
export type { AlarmSettings, EnvironmentSettings, WebAclSettings } from './environments.ts';
export { PLATFORM_RULES, PlatformRules, exemptFromRule } from './platform-rules.ts';
export { SERVICE_FEATURE_FLAGS } from './feature-flags.ts';
