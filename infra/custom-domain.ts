import { Stack, Token } from 'aws-cdk-lib';
import { DomainName, EndpointType } from 'aws-cdk-lib/aws-apigateway';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import { ARecord, RecordTarget } from 'aws-cdk-lib/aws-route53';
import { ApiGatewayDomain } from 'aws-cdk-lib/aws-route53-targets';
import type { Construct } from 'constructs';
import { API_ENDPOINT_ACCESS_MODE, API_SECURITY_POLICY } from './api.ts';
import type { CustomDomainSettings } from './service-props.ts';

/**
 * The API's custom domain: REGIONAL like the API (callers are servers; an
 * edge hop buys them nothing), and a TLS endpoint of its own, so it gets the
 * API's security policy and endpoint access mode (docs/vault.md, 4.2.1): API
 * Gateway's default for a domain would accept TLS 1.0. Mapped to the stage at
 * `basePath`; an alias record in `hostedZone` when one is given.
 */
export function customDomain(scope: Construct, api: RestApi, settings: CustomDomainSettings): DomainName {
  const region = Stack.of(scope).region;
  const certificateArn = settings.certificate.certificateArn;
  if (!Token.isUnresolved(certificateArn) && !Token.isUnresolved(region)) {
    const certificateRegion = /^arn:aws[a-z-]*:acm:([a-z0-9-]+):/.exec(certificateArn)?.[1];
    if (certificateRegion !== region) throw new Error(`customDomain.certificate: a REGIONAL domain needs a certificate in ${region}, not ${certificateRegion ?? certificateArn}`);
  }
  const zoneName = settings.hostedZone?.zoneName;
  if (zoneName !== undefined && !Token.isUnresolved(zoneName) && !`.${settings.domainName}`.endsWith(`.${zoneName.replace(/\.$/, '')}`)) {
    throw new Error(`customDomain.hostedZone: ${settings.domainName} is not in the zone ${zoneName}`);
  }
  const domain = new DomainName(scope, 'CustomDomain', {
    domainName: settings.domainName,
    certificate: settings.certificate,
    endpointType: EndpointType.REGIONAL,
    securityPolicy: API_SECURITY_POLICY,
    endpointAccessMode: API_ENDPOINT_ACCESS_MODE,
  });
  domain.addBasePathMapping(api, { basePath: settings.basePath, stage: api.deploymentStage });
  if (settings.hostedZone) {
    // An A alias only: the domain's endpoint is IPv4 (API Gateway's default address type), so an AAAA record would answer nothing.
    new ARecord(scope, 'CustomDomainAlias', { zone: settings.hostedZone, recordName: settings.domainName, target: RecordTarget.fromAlias(new ApiGatewayDomain(domain)) });
  }
  return domain;
}
