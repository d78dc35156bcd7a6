export * from './bridge.ts';
export * from './common.ts';
export * from './device.ts';
export * from './errors.ts';
export * from './external.ts';
export * from './receipts.ts';
export * from './reports.ts';
export * from './webhooks.ts';
