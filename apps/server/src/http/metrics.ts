import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

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
    gatewaySeconds: new Histogram({
      name: 'kupah_gateway_call_duration_seconds',
      help: 'Gateway call latency',
      labelNames: ['gateway'] as const,
      registers: [registry],
    }),
    rateLimited: new Counter({
      name: 'kupah_rate_limited_total',
      help: 'Requests refused by the per-credential rate limit',
      registers: [registry],
    }),
  };
}
export type Metrics = ReturnType<typeof createMetrics>;
