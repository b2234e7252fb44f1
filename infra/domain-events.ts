import { Duration } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { EventBus, Rule } from 'aws-cdk-lib/aws-events';
import { FilterCriteria, FilterRule, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { StreamTrigger } from '#shared/platform/triggers.ts';
import { BACKGROUND_FUNCTION_ACCESS } from '#shared/platform/function-environment.ts';
import { EVENT_SOURCES } from '#shared/platform/names.ts';
import { deadLetterQueue } from './dead-letter-queue.ts';
import { setFunctionEnvironment } from './access.ts';
import { triggerFunction } from './functions.ts';
import type { FunctionSources } from './functions.ts';

export interface DomainEventsProps extends FunctionSources {
  /** The single table; its stream must carry NEW_AND_OLD_IMAGES. */
  readonly table: ITable;
  readonly triggers: readonly StreamTrigger[];
}

/** A stream batch older than this is sent to the dead-letter queue rather than retried further. */
const MAX_RECORD_AGE = Duration.hours(24);

/**
 * Domain events (docs/events.md): the custom event bus, the function(s) the
 * table's stream feeds from the stream trigger table (shared/platform/triggers.ts), and
 * the dead-letter queue for batches that still fail after their retries. The
 * publisher may read the stream and put events on this bus, nothing else: it
 * never reads the table, so it sees only what a write committed.
 *
 * The rule `ExampleRule` is disabled and has no target: it shows the pattern a
 * consumer writes; a cloud team copies it with its own target.
 */
export class DomainEvents extends Construct {
  readonly bus: EventBus;
  readonly deadLetterQueue: Queue;
  readonly functions: Array<{ name: string; fn: NodejsFunction }> = [];
  readonly exampleRule: Rule;

  constructor(scope: Construct, id: string, props: DomainEventsProps) {
    super(scope, id);
    const { environment } = props;
    this.bus = new EventBus(this, 'Bus', { description: `Payments ${environment.name}: paymethod and document domain events` });
    this.deadLetterQueue = deadLetterQueue(this, props.environment);

    for (const trigger of props.triggers) {
      const fn = triggerFunction(this, trigger, props);
      setFunctionEnvironment(fn, BACKGROUND_FUNCTION_ACCESS[trigger.handler]!, { eventBusName: this.bus.eventBusName });
      this.bus.grantPutEventsTo(fn);
      fn.addEventSource(
        new DynamoEventSource(props.table, {
          startingPosition: StartingPosition.TRIM_HORIZON,
          batchSize: trigger.batchSize,
          maxBatchingWindow: Duration.seconds(trigger.maxBatchingWindowSeconds),
          // A batch that keeps failing is halved until the record at fault is alone; the handler also
          // reports the first event the bus refused, so retries restart there rather than at the batch's start.
          bisectBatchOnError: true,
          reportBatchItemFailures: true,
          retryAttempts: trigger.retryAttempts,
          maxRecordAge: MAX_RECORD_AGE,
          onFailure: new SqsDlq(this.deadLetterQueue),
          // Only paymethod and document items invoke the function; the rest of the table's writes cost nothing here.
          filters: trigger.keyPrefixes.map((prefix) => FilterCriteria.filter({ dynamodb: { Keys: { pk: { S: FilterRule.beginsWith(prefix) } } } })),
        }),
      );
      this.functions.push({ name: trigger.handler, fn });
    }

    this.exampleRule = new Rule(this, 'ExampleRule', {
      eventBus: this.bus,
      enabled: false,
      description: 'Example for consumers (disabled, no target): cards the Account Updater changed',
      eventPattern: { source: [EVENT_SOURCES.paymethods], detailType: ['Paymethod Account Updated'] },
    });
  }
}
