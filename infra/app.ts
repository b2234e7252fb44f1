import { App } from 'aws-cdk-lib';
import { definePaymentsApp } from './payments-app.ts';

definePaymentsApp(new App());
