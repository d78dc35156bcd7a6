export * from './common.ts';
export * from './errors.ts';
export * from './external.ts';
export * from './webhooks.ts';
