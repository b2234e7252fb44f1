import middy from '@middy/core';
import type { EventBridgeEvent } from 'aws-lambda';
import { documentDeps } from '#shared/wiring/documents.ts';
import { VerdictTooEarly, recordScanResult } from '#shared/domain/documents/scan-result.ts';
import { injectLambdaContext, logger } from '#shared/log/logger.ts';
import { recordBusinessMetric } from '#shared/observability/metrics.ts';

/** The detail of GuardDuty's "GuardDuty Malware Protection Object Scan Result" event, as far as it is read here. */
interface ObjectScanResult {
  s3ObjectDetails?: { bucketName?: string; objectKey?: string; versionId?: string };
  scanResultDetails?: { scanResultStatus?: string };
}

/**
 * The end of a malware scan of a stored file (see shared/platform/triggers.ts):
 * GuardDuty's event in AWS, the local scanner's event of the same shape in
 * `npm start`. A failure throws, and the asynchronous invocation's retry redoes
 * it (idempotent); so does a result that arrives before its record settles.
 */
export const handler = middy<EventBridgeEvent<string, ObjectScanResult>, void>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .handler(async (event) => {
    const objectKey = event.detail.s3ObjectDetails?.objectKey;
    const scanResultStatus = event.detail.scanResultDetails?.scanResultStatus ?? 'FAILED';
    if (!objectKey) {
      logger.warn('scan result without an object key', { event_id: event.id });
      return;
    }
    const outcome = await recordScanResult({ objectKey, versionId: event.detail.s3ObjectDetails?.versionId, scanResultStatus }, documentDeps()).catch((error: unknown) => {
      if (error instanceof VerdictTooEarly) logger.info('scan result waits for its record', { key: objectKey, scan_result_status: scanResultStatus, reason: error.message });
      throw error;
    });
    logger.info('scan result recorded', { key: objectKey, scan_result_status: scanResultStatus, outcome });
    if (outcome.status === 'recorded') {
      recordBusinessMetric('DocumentsScanned', 1, { scan_status: outcome.scanStatus });
      if (outcome.scanStatus === 'failed') recordBusinessMetric('DocumentScanFailures', 1, {});
    }
  });
