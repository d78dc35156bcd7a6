import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** Prometheus metrics of one app instance (its own registry, so tests can build many apps). */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpRequests: new Counter({
      name: 'kupah_http_requests_total',
      help: 'HTTP requests by route and status',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [registry],
    }),
    httpSeconds: new Histogram({
      name: 'kupah_http_request_duration_seconds',
      help: 'HTTP request latency',
      labelNames: ['method', 'route'] as const,
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    payments: new Counter({
      name: 'kupah_payments_total',
      help: 'Payments processed by status and method',
      labelNames: ['status', 'method'] as const,
      registers: [registry],
    }),
    voids: new Counter({ name: 'kupah_voids_total', help: 'Payments voided', registers: [registry] }),
    refunds: new Counter({
      name: 'kupah_refunds_total',
      help: 'Refunds recorded, by outcome (succeeded, failed; released ones are not counted)',
      labelNames: ['status'] as const,
      registers: [registry],
    }),
    paymentsPending: new Gauge({
      name: 'kupah_payments_pending',
      help: 'Payments whose gateway outcome is not known yet (being confirmed by recovery)',
      registers: [registry],
    }),
    refundsPending: new Gauge({
      name: 'kupah_refunds_pending',
      help: 'Refunds whose gateway outcome is not known yet (their amount reserved; being confirmed by recovery)',
      registers: [registry],
    }),
    paymentsRecovered: new Counter({
      name: 'kupah_payments_recovered_total',
      help: 'Pending payments resolved by the recovery worker, by the outcome the gateway reported',
      labelNames: ['status'] as const,
      registers: [registry],
    }),
    gatewaySeconds: new Histogram({
      name: 'kupah_gateway_call_duration_seconds',
      help: 'Gateway call latency',
      labelNames: ['gateway'] as const,
      registers: [registry],
    }),
    deviceOperations: new Counter({
      name: 'kupah_device_operations_total',
      help: 'Operations pushed by devices, by kind and result',
      labelNames: ['kind', 'status'] as const,
      registers: [registry],
    }),
    rateLimited: new Counter({
      name: 'kupah_rate_limited_total',
      help: 'Requests refused by the per-credential rate limit',
      registers: [registry],
    }),
    abuseBlocks: new Counter({
      name: 'kupah_abuse_blocks_total',
      help: 'Card-testing blocks started (a credential over its declines, a card over its attempts), by kind',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    abuseRefused: new Counter({
      name: 'kupah_abuse_refused_total',
      help: 'Charges refused before the gateway by the card-testing limits, by error code',
      labelNames: ['code'] as const,
      registers: [registry],
    }),
    webhooksPending: new Gauge({
      name: 'kupah_webhook_deliveries_pending',
      help: 'Webhook deliveries queued or waiting for a retry',
      registers: [registry],
    }),
    webhooksDelivered: new Counter({
      name: 'kupah_webhook_deliveries_delivered_total',
      help: 'Webhook deliveries answered 2xx',
      labelNames: ['type'] as const,
      registers: [registry],
    }),
    webhooksRetried: new Counter({
      name: 'kupah_webhook_attempts_failed_total',
      help: 'Failed webhook attempts scheduled for a retry',
      registers: [registry],
    }),
    webhooksDead: new Counter({
      name: 'kupah_webhook_deliveries_dead_total',
      help: 'Webhook deliveries dead-lettered (schedule exhausted or endpoint gone)',
      registers: [registry],
    }),
    receiptsPending: new Gauge({
      name: 'kupah_receipt_emails_pending',
      help: 'Receipt e-mails queued or waiting for a retry',
      registers: [registry],
    }),
    receiptsOutcome: new Counter({
      name: 'kupah_receipt_emails_total',
      help: 'Receipt e-mail attempts by outcome: sent, retried, bounced (5xx), failed (given up)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    webhookLatency: new Histogram({
      name: 'kupah_webhook_delivery_latency_seconds',
      help: 'From the commit of the event to its successful delivery',
      buckets: [0.01, 0.05, 0.1, 0.2, 0.5, 1, 5, 30, 300, 3600, 86_400],
      registers: [registry],
    }),
  };
}
export type Metrics = ReturnType<typeof createMetrics>;
