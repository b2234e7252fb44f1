import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { EVENTBRIDGE_BUDGET, awsClient } from './client-config.ts';

export const eventBridge = /* @__PURE__ */ awsClient(EventBridgeClient, 'EventBridge', EVENTBRIDGE_BUDGET);
