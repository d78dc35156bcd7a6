/**
 * The admin CLI: `npm run admin -- <group> <command> [flags]`, a thin client of the admin HTTP API
 * (`/admin/...`, `Authorization: Bearer <admin token>`) of a running server's admin listener
 * (ADMIN_HOST:ADMIN_PORT, default http://127.0.0.1:8788). The token is never a flag (a command
 * line is visible to every user of the machine): ADMIN_TOKEN, or a file (--token-file,
 * default DATA_DIR/admin-token).
 *
 * Exit codes: 0 done; 1 the server refused (its message on stderr) or could not be reached;
 * 2 a bad invocation (unknown flag, missing or bad value, no admin token). Every error is one line
 * on stderr starting with `error: `.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { CURRENCIES, SCHEDULE_HANDLING_MODES } from '@kupah/contracts';
import { z } from 'zod';
import type { describeOrg } from '../admin/admin-service.ts';
import type { gatewayChange, settingsPatch } from '../admin/routes.ts';
import { CONSOLE_ROLES } from '../console/env.ts';
import { GATEWAY_PROVIDERS } from '../gateway/registry.ts';
import { isValidTimeZone } from '../orgs/settings.ts';

export interface CliIo {
  stdout(s: string): void;
  stderr(s: string): void;
  env: NodeJS.ProcessEnv;
  fetch?: typeof fetch;
}

export const DEFAULT_SERVER = 'http://127.0.0.1:8788';
const REQUEST_TIMEOUT_MS = 30_000;

/** A bad invocation: exit 2. */
class UsageError extends Error {}

/** The server answered with an error body: exit 1 (and, with --json, the body on stdout). */
class ServerError extends Error {
  constructor(readonly error: { errorCode: string; message: string }) {
    super(error.message);
  }
}

/** Anything else that stops the command (server unreachable, not JSON): exit 1. */
class Failure extends Error {}

// ---------------------------------------------------------------------------------------------
// Flag values

const oneOf = <T extends string>(values: readonly T[], what: string) =>
  z.string().transform((s, ctx) => {
    const hit = values.find((v) => v.toLowerCase() === s.trim().toLowerCase());
    if (hit === undefined) {
      ctx.addIssue({ code: 'custom', message: `must be ${what}` });
      return z.NEVER;
    }
    return hit;
  });

const text = (max = 256) =>
  z.string().trim().min(1, 'must not be empty').max(max, `must be at most ${max} characters`);

const guid = z
  .string()
  .trim()
  .pipe(z.guid({ error: 'must be a GUID such as 3f2b8c1e-6d4a-4c2e-9a57-0b1d2e3f4a5b' }));

const bool = oneOf(['true', 'false'], 'true or false').transform((v) => v === 'true');

const currencyList = z
  .string()
  .transform((s) => [
    ...new Set(
      s
        .split(',')
        .map((c) => c.trim().toUpperCase())
        .filter(Boolean),
    ),
  ])
  .pipe(
    z
      .array(z.enum(CURRENCIES, { error: `must be a comma-separated list of ${CURRENCIES.join(', ')}` }))
      .min(1, `must name at least one of ${CURRENCIES.join(', ')}`),
  );

/** A webhook URL, or `''` / `none` to remove the endpoint (→ null). */
const webhook = z
  .string()
  .trim()
  .transform((s) => (s === '' || s.toLowerCase() === 'none' ? null : s))
  .pipe(
    z
      .url({ protocol: /^https?$/, error: "must be an http(s) URL, or '' or none to remove it" })
      .max(2000, 'must be at most 2000 characters')
      .nullable(),
  );

const timezone = z
  .string()
  .trim()
  .refine(isValidTimeZone, 'must be an IANA time zone such as America/New_York or Asia/Jerusalem');

const positiveNumber = (max: number, integer = false) =>
  z
    .string()
    .trim()
    .regex(integer ? /^\d+$/ : /^\d+(\.\d+)?$/, integer ? 'must be a whole number' : 'must be a number')
    .transform(Number)
    .pipe(z.number().positive('must be more than 0').max(max, `must be at most ${max}`));

/** A decimal amount with at most two decimals (`250`, `99.5`, `1000.00`) → minor units (×100). */
const amountMinor = z
  .string()
  .trim()
  .regex(/^\d{1,12}(\.\d{1,2})?$/, 'must be an amount such as 1000 or 99.50 (at most 2 decimals)')
  .transform((s) => {
    const [whole = '0', fraction = ''] = s.split('.');
    return Number(whole) * 100 + Number(fraction.padEnd(2, '0'));
  })
  .pipe(z.number().int().positive('must be more than 0'));

const amountList = z
  .string()
  .transform((s) =>
    s
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean),
  )
  .pipe(z.array(amountMinor).min(1, 'must name at least one amount').max(12, 'must name at most 12 amounts'));

const percent = z
  .string()
  .trim()
  .regex(/^\d+(\.\d+)?$/, 'must be a number such as 0, 2.5 or 3')
  .transform(Number)
  .pipe(z.number().min(0).max(10, 'must be at most 10'));

const serverUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http(s) URL such as http://127.0.0.1:8788' })
  .transform((s) => s.replace(/\/+$/, ''));

// ---------------------------------------------------------------------------------------------
// Commands

interface Flag {
  /** Parses the raw flag (a string, or a boolean for switches); required unless it accepts undefined. */
  schema: z.ZodType;
  /** Placeholder shown in usage; a flag without one is a switch (`--sandbox`). */
  value?: string;
  help: string;
  /** Its value is never repeated in a message (a key). */
  secret?: boolean;
}
type Flags = Record<string, Flag>;
type Values<F extends Flags> = { [K in keyof F]: z.output<F[K]['schema']> };

interface Context {
  api: Api;
  env: NodeJS.ProcessEnv;
}

interface Command<F extends Flags = Flags> {
  summary: string;
  flags: F;
  run(values: Values<F>, ctx: Context): Promise<unknown>;
}

const command = <F extends Flags>(c: Command<F>): Command => c as unknown as Command;

const switchFlag = (help: string) => ({ schema: z.boolean().default(false), help });
const orgFlag = { schema: guid, value: 'GUID', help: 'the organisation (required)' };

type SettingsPatch = z.input<typeof settingsPatch>;
type GatewayChangeBody = z.input<typeof gatewayChange>;
const PROVIDERS = ['none', ...Object.keys(GATEWAY_PROVIDERS)];
type OrgView = Awaited<ReturnType<typeof describeOrg>>;

const org = (g: string) => `/orgs/${encodeURIComponent(g)}`;
const isoTime = z.iso.datetime({
  offset: true,
  error: 'must be an ISO 8601 time such as 2026-11-22T00:00:00Z',
});
const consoleEmail = z
  .string()
  .trim()
  .max(320, 'must be at most 320 characters')
  .pipe(z.email({ error: 'must be an e-mail address such as name@example.org' }));
const deliveryFlag = {
  schema: positiveNumber(1e15, true),
  value: 'ID',
  help: 'the delivery id (from webhook list)',
};

const COMMANDS: Record<string, { summary: string; commands: Record<string, Command> }> = {
  org: {
    summary: 'organisations',
    commands: {
      create: command({
        summary: 'Create an organisation with a sandbox API key and a sandbox external source.',
        flags: {
          name: { schema: text(), value: 'NAME', help: 'organisation name (required)' },
          currencies: {
            schema: currencyList.optional(),
            value: 'LIST',
            help: `accepted currencies, comma-separated (default all: ${CURRENCIES.join(',')})`,
          },
        },
        run: (v, { api }) =>
          api('POST', '/orgs', { name: v.name, ...(v.currencies ? { currencies: v.currencies } : {}) }),
      }),
      show: command({
        summary: 'Show an organisation: currencies, settings, webhook endpoints and gateway.',
        flags: { org: orgFlag },
        run: (v, { api }) => api('GET', org(v.org)),
      }),
      settings: command({
        summary:
          'Change settings (give at least one); prints the organisation. Setting a webhook URL prints ' +
          'its new signing secret under webhookSecrets (shown once).',
        flags: {
          org: orgFlag,
          currencies: {
            schema: currencyList.optional(),
            value: 'LIST',
            help: `accepted currencies, comma-separated, of ${CURRENCIES.join(',')}`,
          },
          'payment-webhook': {
            schema: webhook.optional(),
            value: 'URL',
            help: "payment webhook endpoint ('' or none removes it)",
          },
          'schedule-webhook': {
            schema: webhook.optional(),
            value: 'URL',
            help: "schedule webhook endpoint ('' or none removes it)",
          },
          'void-webhook': {
            schema: webhook.optional(),
            value: 'URL',
            help: "void webhook endpoint ('' or none removes it)",
          },
          'schedule-mode': {
            schema: oneOf(SCHEDULE_HANDLING_MODES, SCHEDULE_HANDLING_MODES.join(', ')).optional(),
            value: 'MODE',
            help: `who runs recurring schedules: ${SCHEDULE_HANDLING_MODES.join('|')}`,
          },
          il: { schema: bool.optional(), value: 'BOOL', help: 'Israeli organisation: true|false' },
          timezone: {
            schema: timezone.optional(),
            value: 'ZONE',
            help: 'IANA time zone, e.g. America/New_York',
          },
          'shabbat-shift': {
            schema: bool.optional(),
            value: 'BOOL',
            help: 'move schedule runs off Shabbat and holidays: true|false',
          },
          'webhooks-all-sources': {
            schema: bool.optional(),
            value: 'BOOL',
            help: 'send webhooks for payments from every source: true|false',
          },
          'rate-per-second': {
            schema: positiveNumber(100_000).optional(),
            value: 'N',
            help: 'rate limit, requests per second (burst kept if not given)',
          },
          'rate-burst': {
            schema: positiveNumber(1_000_000, true).optional(),
            value: 'N',
            help: 'rate limit burst (per-second kept if not given)',
          },
          'offline-per-payment': {
            schema: amountMinor.optional(),
            value: 'AMOUNT',
            help: 'offline limit per payment, e.g. 1000 or 99.50',
          },
          'offline-total': {
            schema: amountMinor.optional(),
            value: 'AMOUNT',
            help: 'offline limit in total per device, e.g. 10000',
          },
          'offline-expiry-hours': {
            schema: positiveNumber(72).optional(),
            value: 'N',
            help: 'hours an offline payment may wait to sync (at most 72)',
          },
          presets: {
            schema: amountList.optional(),
            value: 'LIST',
            help: "terminals' preset amounts, comma-separated, e.g. 18,36,54,100,180",
          },
          'cover-fee': {
            schema: percent.optional(),
            value: 'PERCENT',
            help: 'percentage a donor may add to cover fees on terminals (0 = not offered)',
          },
          'legal-name': {
            schema: text().optional(),
            value: 'NAME',
            help: "the organisation's legal name on tax receipts ('' removes it)",
          },
          address: {
            schema: z.string().max(1000).optional(),
            value: 'TEXT',
            help: "its address on receipts; \\n separates lines ('' removes it)",
          },
          'tax-id': {
            schema: text(64).optional(),
            value: 'ID',
            help: "tax identifier: EIN, or the section 46 approval number ('' removes it)",
          },
          receipts: {
            schema: bool.optional(),
            value: 'BOOL',
            help: 'e-mail receipts: true|false (default: on once legal name and tax id are set)',
          },
          'receipt-template-en': {
            schema: text(1000).optional(),
            value: 'FILE',
            help: 'file with the English tax statement ({legalName}, {taxId} filled in)',
          },
          'receipt-template-he': {
            schema: text(1000).optional(),
            value: 'FILE',
            help: 'file with the Hebrew tax statement',
          },
        },
        async run(v, { api, env }) {
          const patch: SettingsPatch = {
            currencies: v.currencies,
            paymentWebhook: v['payment-webhook'],
            scheduleWebhook: v['schedule-webhook'],
            voidWebhook: v['void-webhook'],
            scheduleMode: v['schedule-mode'],
            il: v.il,
            timezone: v.timezone,
            shabbatShift: v['shabbat-shift'],
            webhooksAllSources: v['webhooks-all-sources'],
          };
          const rate = { perSecond: v['rate-per-second'], burst: v['rate-burst'] };
          const offline = {
            perPaymentMinor: v['offline-per-payment'],
            totalMinor: v['offline-total'],
            expiryHours: v['offline-expiry-hours'],
          };
          const terminal = { presetsMinor: v.presets, coverFeePercent: v['cover-fee'] };
          const cleared = (x: string | undefined) =>
            x === undefined ? undefined : x.trim() === '' ? null : x;
          const receipts = {
            legalName: cleared(v['legal-name']),
            address: cleared(v.address?.replaceAll('\\n', '\n')),
            taxId: cleared(v['tax-id']),
            enabled: v.receipts,
            statementEn: templateFile(v['receipt-template-en'], env, '--receipt-template-en'),
            statementHe: templateFile(v['receipt-template-he'], env, '--receipt-template-he'),
          };
          const given = (o: object) => Object.values(o).filter((x) => x !== undefined).length;
          if (given(receipts) > 0) {
            patch.receipts = Object.fromEntries(Object.entries(receipts).filter(([, x]) => x !== undefined));
          }
          if (given(patch) + given(rate) + given(offline) + given(terminal) === 0) {
            throw new UsageError('org settings: give at least one setting to change (see --help)');
          }
          const partial = (o: object) => given(o) > 0 && given(o) < Object.keys(o).length;
          const current =
            partial(rate) || partial(offline) || partial(terminal)
              ? ((await api('GET', org(v.org))) as OrgView).settings
              : null;
          if (given(rate) > 0) {
            patch.rateLimit = {
              perSecond: rate.perSecond ?? current!.rateLimit.perSecond,
              burst: rate.burst ?? current!.rateLimit.burst,
            };
          }
          if (given(offline) > 0) {
            patch.offline = {
              perPaymentMinor: offline.perPaymentMinor ?? current!.offline.perPaymentMinor,
              totalMinor: offline.totalMinor ?? current!.offline.totalMinor,
              expiryHours: offline.expiryHours ?? current!.offline.expiryHours,
            };
          }
          if (given(terminal) > 0) {
            patch.terminal = {
              presetsMinor: terminal.presetsMinor ?? current!.terminal.presetsMinor,
              coverFeePercent: terminal.coverFeePercent ?? current!.terminal.coverFeePercent,
            };
          }
          const body = Object.fromEntries(Object.entries(patch).filter(([, x]) => x !== undefined));
          return api('PATCH', `${org(v.org)}/settings`, body);
        },
      }),
      gateway: command({
        summary:
          "Set the gateway of the organisation's production credentials (the key is stored sealed and " +
          'shown only as its last 4 characters), or remove it with --provider none.',
        flags: {
          org: orgFlag,
          provider: {
            schema: oneOf(PROVIDERS, PROVIDERS.join(' or ')),
            value: 'NAME',
            help: `${PROVIDERS.filter((p) => p !== 'none').join(', ')}, or none to remove the gateway (required)`,
          },
          'key-file': {
            schema: z.string().trim().min(1, 'must not be empty').optional(),
            value: 'PATH',
            // A key mistakenly given here, or as a stray argument of this command, is never repeated.
            secret: true,
            help: "a file holding the provider's API key (default: the GATEWAY_KEY environment variable; never a command-line value, which every user sees in ps)",
          },
          url: {
            schema: z
              .string()
              .trim()
              .pipe(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(2000))
              .optional(),
            value: 'URL',
            help: "the provider's endpoint (default its production endpoint; e.g. an emulator's)",
          },
        },
        run: (v, { api, env }) => {
          let body: GatewayChangeBody;
          const keyFile = v['key-file'];
          if (v.provider === 'none') {
            if (keyFile !== undefined || v.url !== undefined) {
              throw new UsageError('org gateway: --key-file and --url are not taken with --provider none');
            }
            body = { provider: 'none' };
          } else {
            const key = gatewayKey(keyFile, env, v.provider);
            body = { provider: v.provider, key, ...(v.url !== undefined ? { url: v.url } : {}) };
          }
          return api('PUT', `${org(v.org)}/gateway`, body);
        },
      }),
    },
  },
  apikey: {
    summary: 'API keys (the External API `apikey` header)',
    commands: {
      create: command({
        summary: 'Create an API key; prints it (shown once).',
        flags: {
          org: orgFlag,
          sandbox: switchFlag('a sandbox key (kpk_test_...); default live'),
          name: { schema: text().optional(), value: 'NAME', help: 'a label for the key' },
        },
        run: (v, { api }) =>
          api('POST', `${org(v.org)}/api-keys`, { sandbox: v.sandbox, ...(v.name ? { name: v.name } : {}) }),
      }),
      revoke: command({
        summary: 'Revoke an API key.',
        flags: {
          org: orgFlag,
          key: { schema: text(), value: 'KEY', help: 'the API key to revoke (required)' },
        },
        run: (v, { api }) => api('POST', `${org(v.org)}/api-keys/revoke`, { apiKey: v.key }),
      }),
    },
  },
  source: {
    summary: 'sources (the `Authorization` header of devices and integrations)',
    commands: {
      create: command({
        summary: 'Create a source; prints its sourceGuid (shown once).',
        flags: {
          org: orgFlag,
          name: { schema: text(), value: 'NAME', help: 'source name, e.g. "Lobby kiosk" (required)' },
          kind: {
            schema: oneOf(['device', 'external'] as const, 'device or external'),
            value: 'KIND',
            help: 'device (a terminal) or external (an integration) (required)',
          },
          sandbox: switchFlag('a sandbox source (sandbox gateway); default live'),
        },
        run: (v, { api }) =>
          api('POST', `${org(v.org)}/sources`, { name: v.name, kind: v.kind, sandbox: v.sandbox }),
      }),
      revoke: command({
        summary: 'Revoke a source.',
        flags: {
          org: orgFlag,
          source: { schema: text(), value: 'GUID', help: 'the sourceGuid to revoke (required)' },
        },
        run: (v, { api }) => api('POST', `${org(v.org)}/sources/revoke`, { sourceGuid: v.source }),
      }),
    },
  },
  payments: {
    summary: 'payments being confirmed with the gateway (Pending: the outcome of the call is not known yet)',
    commands: {
      pending: command({
        summary:
          'List Pending payments, oldest first: since when, whether a request is still sending or the ' +
          'outcome is in doubt, when recovery asks the gateway next, and what it last heard.',
        flags: { org: orgFlag },
        run: (v, { api }) => api('GET', `${org(v.org)}/payments/pending`),
      }),
    },
  },
  device: {
    summary: 'terminals: pairing codes, the devices list (last seen, queue), revocation, envelope keys',
    commands: {
      create: command({
        summary: 'Create a device and print its one-time pairing code (valid 15 minutes).',
        flags: {
          org: orgFlag,
          name: { schema: text(), value: 'NAME', help: 'device name, e.g. "Kiosk 1" (required)' },
          sandbox: switchFlag('a sandbox device (sandbox gateway); default live'),
        },
        run: (v, { api }) => api('POST', `${org(v.org)}/devices`, { name: v.name, sandbox: v.sandbox }),
      }),
      list: command({
        summary: 'List devices: status, last seen, app version, queue depth and total at the last sync.',
        flags: { org: orgFlag },
        run: (v, { api }) => api('GET', `${org(v.org)}/devices`),
      }),
      revoke: command({
        summary: 'Revoke a device: its pushes are refused from now on (DEVICE_REVOKED).',
        flags: {
          org: orgFlag,
          device: { schema: text(64), value: 'ID', help: 'the deviceId (dev_...) to revoke (required)' },
        },
        run: (v, { api }) => api('POST', `${org(v.org)}/devices/${encodeURIComponent(v.device)}/revoke`),
      }),
      keys: command({
        summary: 'List envelope keys, and the devices still holding items sealed under each.',
        flags: {},
        run: (_v, { api }) => api('GET', '/envelope-keys'),
      }),
      'rotate-key': command({
        summary:
          'Make a new envelope key for one organisation (--org) or for every one; older keys keep opening what devices still hold.',
        flags: {
          org: { ...orgFlag, schema: guid.optional(), help: 'only this organisation (default: all)' },
        },
        run: (v, { api }) =>
          api('POST', `/envelope-keys/rotate${v.org ? `?org=${encodeURIComponent(v.org)}` : ''}`),
      }),
      'retire-key': command({
        summary: 'Retire an old envelope key (refused while a device still holds items sealed under it).',
        flags: { kid: { schema: text(64), value: 'KID', help: 'the key id to retire (required)' } },
        run: (v, { api }) => api('POST', `/envelope-keys/${encodeURIComponent(v.kid)}/retire`),
      }),
    },
  },
  receipts: {
    summary: 'tax receipts: e-mail deliveries (failures, bounces), year-end statements',
    commands: {
      list: command({
        summary: 'List receipt e-mails, newest first (addresses masked).',
        flags: {
          org: orgFlag,
          status: {
            schema: oneOf(
              ['pending', 'sent', 'bounced', 'failed'] as const,
              'pending, sent, bounced or failed',
            ).optional(),
            value: 'STATUS',
            help: 'pending, sent, bounced or failed',
          },
          limit: {
            schema: positiveNumber(500, true).optional(),
            value: 'N',
            help: 'at most N rows (default 100)',
          },
        },
        run: (v, { api }) => {
          const q = new URLSearchParams();
          for (const k of ['status', 'limit'] as const) if (v[k] !== undefined) q.set(k, String(v[k]));
          return api('GET', `${org(v.org)}/receipts?${q}`);
        },
      }),
      annual: command({
        summary:
          "Generate every donor's year-end statement of a year (PDF); with --send, e-mail each once " +
          '(running it again sends none twice). Prints how many, and the donors without an e-mail address.',
        flags: {
          org: orgFlag,
          year: {
            schema: positiveNumber(2100, true),
            value: 'YEAR',
            help: 'the civil year, e.g. 2026 (required)',
          },
          send: switchFlag('queue the statements for e-mail (needs receipts on)'),
        },
        run: (v, { api }) => api('POST', `${org(v.org)}/receipts/annual`, { year: v.year, send: v.send }),
      }),
    },
  },
  webhook: {
    summary: 'webhook deliveries: list, attempts, replay, secret rotation',
    commands: {
      list: command({
        summary: 'List deliveries, newest first.',
        flags: {
          org: orgFlag,
          status: {
            schema: oneOf(['pending', 'delivered', 'dead'] as const, 'pending, delivered or dead').optional(),
            value: 'STATUS',
            help: 'pending, delivered or dead',
          },
          kind: {
            schema: oneOf(['payment', 'schedule', 'void'] as const, 'payment, schedule or void').optional(),
            value: 'KIND',
            help: 'payment, schedule or void',
          },
          since: {
            schema: isoTime.optional(),
            value: 'TIME',
            help: 'created at or after (ISO 8601, e.g. 2026-11-22T00:00:00Z)',
          },
          limit: {
            schema: positiveNumber(1000, true).optional(),
            value: 'N',
            help: 'at most N rows (default 100)',
          },
        },
        run: (v, { api }) => {
          const q = new URLSearchParams();
          for (const k of ['status', 'kind', 'since', 'limit'] as const)
            if (v[k] !== undefined) q.set(k, String(v[k]));
          return api('GET', `${org(v.org)}/deliveries?${q}`);
        },
      }),
      attempts: command({
        summary: 'Show a delivery and its attempts (status code, latency, error).',
        flags: { org: orgFlag, delivery: deliveryFlag },
        run: (v, { api }) => api('GET', `${org(v.org)}/deliveries/${v.delivery}/attempts`),
      }),
      replay: command({
        summary: 'Send a delivery again (same webhook-id), or every dead one since a time.',
        flags: {
          org: orgFlag,
          delivery: {
            ...deliveryFlag,
            schema: deliveryFlag.schema.optional(),
            help: 'the delivery id to replay',
          },
          'failed-since': {
            schema: isoTime.optional(),
            value: 'TIME',
            help: 'replay every dead delivery created since TIME',
          },
        },
        run: (v, { api }) => {
          const since = v['failed-since'];
          if ((v.delivery === undefined) === (since === undefined)) {
            throw new UsageError('webhook replay: give exactly one of --delivery or --failed-since');
          }
          return v.delivery !== undefined
            ? api('POST', `${org(v.org)}/deliveries/${v.delivery}/replay`)
            : api('POST', `${org(v.org)}/deliveries/replay`, { failedSince: since });
        },
      }),
      rotate: command({
        summary: "Rotate an endpoint's signing secret; the old one keeps signing beside it for 24 h.",
        flags: {
          org: orgFlag,
          kind: {
            schema: oneOf(['payment', 'schedule', 'void'] as const, 'payment, schedule or void'),
            value: 'KIND',
            help: 'payment, schedule or void (required)',
          },
        },
        run: (v, { api }) => api('POST', `${org(v.org)}/webhooks/${v.kind}/rotate`),
      }),
      events: command({
        summary: 'Admin events of the organisation (e.g. endpoints disabled).',
        flags: { org: orgFlag },
        run: (v, { api }) => api('GET', `${org(v.org)}/events`),
      }),
    },
  },
  user: {
    summary: "people who sign in to the organisation's web console (/console/)",
    commands: {
      create: command({
        summary:
          'Create a console user. Without --password, prints a one-time set-up link (valid 7 days; also ' +
          'e-mailed when SMTP_URL is set) with which they choose their password.',
        flags: {
          org: orgFlag,
          email: {
            schema: consoleEmail,
            value: 'EMAIL',
            help: 'their e-mail address, the sign-in name (required)',
          },
          role: {
            schema: oneOf(CONSOLE_ROLES, CONSOLE_ROLES.join(', ')),
            value: 'ROLE',
            help: 'owner (everything), manager (all but users, gateway, API keys) or viewer (read only) (required)',
          },
          name: { schema: text(200).optional(), value: 'NAME', help: 'their name' },
          password: {
            schema: z.string().min(1, 'must not be empty').optional(),
            value: 'PASSWORD',
            secret: true,
            help: 'set this password now (10 to 200 characters; default: print a set-up link instead)',
          },
        },
        run: (v, { api }) =>
          api('POST', `${org(v.org)}/users`, {
            email: v.email,
            role: v.role,
            ...(v.name !== undefined ? { name: v.name } : {}),
            ...(v.password !== undefined ? { password: v.password } : {}),
          }),
      }),
      list: command({
        summary:
          'List the console users of an organisation: role, disabled, invited (no password yet), last sign-in.',
        flags: { org: orgFlag },
        run: (v, { api }) => api('GET', `${org(v.org)}/users`),
      }),
      disable: command({
        summary: 'Disable a console user: their sessions end and they can no longer sign in.',
        flags: {
          org: orgFlag,
          email: { schema: consoleEmail, value: 'EMAIL', help: 'their e-mail address (required)' },
        },
        run: (v, { api }) => api('POST', `${org(v.org)}/users/disable`, { email: v.email }),
      }),
    },
  },
  audit: {
    summary: 'the admin audit log',
    commands: {
      list: command({
        summary:
          'Admin actions and refused admin requests, newest first: when, who (token fingerprint), what, ' +
          'from where, outcome.',
        flags: {
          org: { schema: guid.optional(), value: 'GUID', help: 'only actions on this organisation' },
          since: {
            schema: isoTime.optional(),
            value: 'TIME',
            help: 'at or after (ISO 8601, e.g. 2026-11-22T00:00:00Z)',
          },
          limit: {
            schema: positiveNumber(1000, true).optional(),
            value: 'N',
            help: 'at most N entries (default 100)',
          },
        },
        run: (v, { api }) => {
          const q = new URLSearchParams();
          for (const k of ['org', 'since', 'limit'] as const) if (v[k] !== undefined) q.set(k, String(v[k]));
          return api('GET', `/audit?${q}`);
        },
      }),
    },
  },
  secrets: {
    summary:
      "secrets sealed under the server's key-encryption key (KUPAH_MASTER_KEY): gateway keys, envelope " +
      'and signing private keys, webhook signing secrets',
    commands: {
      status: command({
        summary: 'Show the key-encryption key ids and how many stored secrets each one seals.',
        flags: {},
        run: (_v, { api }) => api('GET', '/secrets'),
      }),
      rewrap: command({
        summary:
          'Re-seal every stored secret under the current key (after rotating; the old key as ' +
          'KUPAH_MASTER_KEY_PREVIOUS), and seal any an earlier version stored in clear; prints how many.',
        flags: {},
        run: (_v, { api }) => api('POST', '/secrets/rewrap'),
      }),
    },
  },
};

const GLOBAL_FLAGS: Flags = {
  server: {
    schema: z.string().optional(),
    value: 'URL',
    help: `the server's admin address, ADMIN_HOST:ADMIN_PORT (default $KUPAH_ADMIN_URL, else ${DEFAULT_SERVER})`,
  },
  'token-file': {
    schema: z.string().optional(),
    value: 'PATH',
    help: 'file holding the admin token (default: $ADMIN_TOKEN if set, else $DATA_DIR/admin-token, DATA_DIR default ./data)',
  },
  json: switchFlag('print the answer as one JSON object on one line'),
  help: switchFlag('show this help'),
};

// ---------------------------------------------------------------------------------------------
// Usage

const USAGE = 'npm run admin --';

function flagLines(flags: Flags, indent: string): string[] {
  const label = (name: string, f: Flag) =>
    `${name === 'help' ? '-h, ' : ''}--${name}${f.value ? ` ${f.value}` : ''}`;
  const width = Math.max(...Object.entries(flags).map(([n, f]) => label(n, f).length));
  return Object.entries(flags).map(([n, f]) => `${indent}${label(n, f).padEnd(width)}  ${f.help}`);
}

const globalHelp = () => ['', 'Global flags:', ...flagLines(GLOBAL_FLAGS, '  ')];

function commandHelp(group: string, name: string, c: Command): string[] {
  const required = Object.entries(c.flags)
    .filter(([, f]) => !f.schema.safeParse(undefined).success)
    .map(([n, f]) => `--${n} ${f.value ?? ''}`.trim());
  return [`${USAGE} ${group} ${name} ${[...required, '[flags]'].join(' ')}`, `  ${c.summary}`];
}

function topUsage(): string {
  const lines = [`Usage: ${USAGE} <command> [flags]`, '', 'Commands:'];
  for (const [group, g] of Object.entries(COMMANDS)) {
    for (const [name, c] of Object.entries(g.commands)) {
      lines.push(`  ${group} ${name}`.padEnd(20) + c.summary);
    }
  }
  lines.push('', `Run \`${USAGE} <command> --help\` for a command's flags.`, ...globalHelp());
  return lines.join('\n');
}

function groupUsage(group: string): string {
  const g = COMMANDS[group]!;
  const lines = [`Usage: ${USAGE} ${group} <${Object.keys(g.commands).join('|')}> [flags]   (${g.summary})`];
  for (const [name, c] of Object.entries(g.commands)) {
    lines.push('', ...commandHelp(group, name, c), ...flagLines(c.flags, '    '));
  }
  lines.push(...globalHelp());
  return lines.join('\n');
}

function commandUsage(group: string, name: string): string {
  const c = COMMANDS[group]!.commands[name]!;
  const [usage, summary] = commandHelp(group, name, c);
  return [
    `Usage: ${usage}`,
    '',
    summary!.trim(),
    '',
    'Flags:',
    ...flagLines(c.flags, '  '),
    ...globalHelp(),
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Admin API client

type Api = (method: string, path: string, body?: unknown) => Promise<unknown>;

interface TokenSource {
  token: string;
  from: string;
}

const gatewayKeySchema = z
  .string()
  .trim()
  .min(8, 'must be at least 8 characters')
  .max(512, 'must be at most 512 characters')
  .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces');

/** A receipt template file's text (relative to where `npm run admin` was typed). */
function templateFile(file: string | undefined, env: NodeJS.ProcessEnv, flag: string): string | undefined {
  if (file === undefined) return undefined;
  try {
    return readFileSync(resolve(env.INIT_CWD ?? process.cwd(), file), 'utf8').trim();
  } catch (err) {
    throw new UsageError(
      `org settings: ${flag}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
}

/** The gateway key from --key-file, else GATEWAY_KEY; its value is never repeated in a message. */
function gatewayKey(file: string | undefined, env: NodeJS.ProcessEnv, provider: string): string {
  let raw: string;
  let from: string;
  if (file !== undefined) {
    try {
      // Relative to where `npm run admin` was typed (npm runs the script from the repository root).
      raw = readFileSync(resolve(env.INIT_CWD ?? process.cwd(), file), 'utf8');
    } catch (err) {
      throw new UsageError(
        `org gateway: --key-file: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
    from = '--key-file';
  } else if (env.GATEWAY_KEY?.trim()) {
    raw = env.GATEWAY_KEY;
    from = 'GATEWAY_KEY';
  } else {
    throw new UsageError(
      `org gateway: the key is required with --provider ${provider}: set GATEWAY_KEY or pass --key-file PATH`,
    );
  }
  const parsed = gatewayKeySchema.safeParse(raw);
  if (!parsed.success) throw new UsageError(`org gateway: ${from} ${parsed.error.issues[0]?.message}`);
  return parsed.data;
}

/** --token-file, else ADMIN_TOKEN, else DATA_DIR/admin-token. Never a command-line value. */
function resolveToken(tokenFile: string | undefined, env: NodeJS.ProcessEnv): TokenSource {
  const base = env.INIT_CWD || process.cwd();
  if (tokenFile !== undefined) {
    if (!tokenFile.trim()) throw new UsageError('--token-file must not be empty');
    const file = resolve(base, tokenFile.trim());
    let token = '';
    try {
      token = readFileSync(file, 'utf8').trim();
    } catch (err) {
      throw new UsageError(
        `--token-file: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
    if (!token) throw new UsageError(`--token-file: ${file} is empty`);
    return { token, from: file };
  }
  if (env.ADMIN_TOKEN?.trim()) return { token: env.ADMIN_TOKEN.trim(), from: 'ADMIN_TOKEN' };
  // As the server does: a relative DATA_DIR is relative to where npm was invoked.
  const dataDir = resolve(base, env.DATA_DIR || './data');
  const file = join(dataDir, 'admin-token');
  let token = '';
  try {
    token = readFileSync(file, 'utf8').trim();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT') throw new UsageError(`cannot read the admin token from ${file} (${code})`);
  }
  if (!token) {
    throw new UsageError(
      `no admin token: set ADMIN_TOKEN, pass --token-file PATH, or set DATA_DIR to the server's (no ${file}; the server writes it on first start)`,
    );
  }
  return { token, from: file };
}

/** `--token VALUE` would show the token to every user of the machine (ps, shell history). */
const TOKEN_FLAG_REFUSED =
  '--token is not accepted: a token on the command line is visible to other users of this machine ' +
  '(ps, /proc, shell history). Set ADMIN_TOKEN in the environment, or use --token-file PATH ' +
  '(default DATA_DIR/admin-token)';

function isErrorBody(x: unknown): x is { error: { errorCode: string; message: string } } {
  const e = (x as { error?: { errorCode?: unknown; message?: unknown } } | null)?.error;
  return typeof e?.message === 'string' && typeof e.errorCode === 'string';
}

function apiClient(server: string, token: () => TokenSource, fetchImpl: typeof fetch): Api {
  return async (method, path, body) => {
    const { token: bearer, from } = token();
    const unreachable = `cannot reach the server at ${server} (is it running? npm start)`;
    let status: number;
    let text: string;
    try {
      const res = await fetchImpl(`${server}/admin${path}`, {
        method,
        headers: {
          authorization: `Bearer ${bearer}`,
          'user-agent': 'kupah-admin-cli',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      status = res.status;
      text = await res.text();
    } catch (err) {
      if ((err as Error).name === 'TimeoutError') {
        throw new Failure(`the server at ${server} did not answer within ${REQUEST_TIMEOUT_MS / 1000}s`);
      }
      throw new Failure(unreachable);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (status >= 400) {
      if (!isErrorBody(parsed)) {
        throw new ServerError({
          errorCode: `HTTP_${status}`,
          message: `the server at ${server} answered HTTP ${status} (is --server a kupah server?)`,
        });
      }
      const { error } = parsed;
      if (status === 401) {
        throw new ServerError({ ...error, message: `${error.message} (the token from ${from} was refused)` });
      }
      if (status === 404 && error.message.startsWith('No route ')) {
        throw new ServerError({
          ...error,
          message: `${error.message} (is --server the admin address, ADMIN_HOST:ADMIN_PORT? default ${DEFAULT_SERVER})`,
        });
      }
      throw new ServerError(error);
    }
    if (parsed === undefined || parsed === null || typeof parsed !== 'object') {
      throw new Failure(`the server at ${server} did not answer JSON (is --server a kupah server?)`);
    }
    return parsed;
  };
}

// ---------------------------------------------------------------------------------------------
// Entry

const oneLine = (s: string) => s.replace(/\s*\n\s*/g, ' ').trim();

/** Parses the raw value of each flag with its schema; all problems in one message. */
function validate(flags: Flags, raw: Record<string, unknown>, where: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, f] of Object.entries(flags)) {
    const value = raw[name];
    const r = f.schema.safeParse(value);
    if (r.success) out[name] = r.data;
    else if (value === undefined) problems.push(`--${name} is required`);
    else
      problems.push(
        `--${name} ${r.error.issues[0]?.message ?? 'is not valid'}${f.secret ? '' : ` (got ${JSON.stringify(value)})`}`,
      );
  }
  if (problems.length > 0) throw new UsageError(`${where}: ${problems.join('; ')}`);
  return out;
}

function parseFlags(args: string[], flags: Flags, where: string): Record<string, unknown> {
  const options = Object.fromEntries(
    Object.entries(flags).map(([n, f]) => [
      n,
      { type: f.value ? ('string' as const) : ('boolean' as const), ...(n === 'help' ? { short: 'h' } : {}) },
    ]),
  );
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    const e = err as Error & { code?: string };
    const name = /'(-[^' ]+)/.exec(e.message)?.[1] ?? '';
    switch (e.code) {
      case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
        throw new UsageError(`${where}: unknown flag ${name} (see --help)`);
      case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
        // With a secret flag on the line, the stray word may be the secret: not repeated.
        throw new UsageError(
          Object.values(flags).some((f) => f.secret)
            ? `${where}: unexpected argument (not shown; give every value after its flag)`
            : `${where}: unexpected argument ${/'([^']*)'/.exec(e.message)?.[1] ?? ''}`,
        );
      case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
        throw new UsageError(
          flags[name.replace(/^-+/, '')]?.value
            ? `${where}: ${name} needs a value (use ${name}=VALUE for one starting with -)`
            : `${where}: ${name} takes no value`,
        );
      default:
        throw new UsageError(`${where}: ${oneLine(e.message)}`);
    }
  }
}

/** Splits `[global flags] <group> <command> [flags]` into the command words and the flags. */
function splitCommand(argv: string[]): { words: string[]; rest: string[] } {
  const words: string[] = [];
  const rest: string[] = [];
  let i = 0;
  for (; i < argv.length && words.length < 2; i++) {
    const a = argv[i]!;
    if (a === '--') break;
    if (!a.startsWith('-')) {
      words.push(a);
      continue;
    }
    rest.push(a);
    if ((a === '--server' || a === '--token-file') && i + 1 < argv.length) rest.push(argv[++i]!);
  }
  return { words, rest: [...rest, ...argv.slice(i)] };
}

export async function run(argv: string[], io: CliIo): Promise<number> {
  let json = false;
  const print = (value: unknown) =>
    io.stdout(`${json ? JSON.stringify(value) : JSON.stringify(value, null, 2)}\n`);
  try {
    // Before anything else, and without repeating the value.
    if (argv.some((a) => a === '--token' || a.startsWith('--token=')))
      throw new UsageError(TOKEN_FLAG_REFUSED);
    const { words, rest } = splitCommand(argv);
    const help = rest.includes('--help') || rest.includes('-h');
    const [groupName, commandName] = words;
    if (
      groupName === 'org' &&
      commandName === 'gateway' &&
      rest.some((a) => a === '--key' || a.startsWith('--key='))
    ) {
      throw new UsageError(
        'org gateway: --key is not taken: a key on the command line is visible to every user of the machine ' +
          '(ps, /proc, shell history). Set GATEWAY_KEY in the environment, or use --key-file PATH',
      );
    }
    if (groupName === undefined) {
      if (!help) throw new UsageError(`missing command; try \`${USAGE} --help\``);
      io.stdout(`${topUsage()}\n`);
      return 0;
    }
    const group = Object.hasOwn(COMMANDS, groupName) ? COMMANDS[groupName] : undefined;
    if (!group) {
      throw new UsageError(`unknown command "${groupName}"; commands: ${Object.keys(COMMANDS).join(', ')}`);
    }
    const names = Object.keys(group.commands).join(', ');
    if (commandName === undefined) {
      if (!help) throw new UsageError(`${groupName}: missing command; one of ${names}`);
      io.stdout(`${groupUsage(groupName)}\n`);
      return 0;
    }
    const cmd = Object.hasOwn(group.commands, commandName) ? group.commands[commandName] : undefined;
    if (!cmd) throw new UsageError(`${groupName}: unknown command "${commandName}"; one of ${names}`);
    if (help) {
      io.stdout(`${commandUsage(groupName, commandName)}\n`);
      return 0;
    }

    const where = `${groupName} ${commandName}`;
    const raw = parseFlags(rest, { ...GLOBAL_FLAGS, ...cmd.flags }, where);
    json = raw.json === true;
    const values = validate(cmd.flags, raw, where);
    const envName = io.env.KUPAH_ADMIN_URL !== undefined ? 'KUPAH_ADMIN_URL' : 'KUPAH_SERVER';
    const serverRaw = (raw.server as string | undefined) ?? io.env[envName] ?? DEFAULT_SERVER;
    const server = serverUrl.safeParse(serverRaw.trim());
    if (!server.success) {
      const source = raw.server === undefined ? envName : '--server';
      throw new UsageError(`${source} ${server.error.issues[0]?.message} (got ${JSON.stringify(serverRaw)})`);
    }
    let token: TokenSource | undefined;
    const api = apiClient(
      server.data,
      () => (token ??= resolveToken(raw['token-file'] as string | undefined, io.env)),
      io.fetch ?? fetch,
    );
    print(await cmd.run(values, { api, env: io.env }));
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`error: ${oneLine(err.message)}\n`);
      return 2;
    }
    if (err instanceof ServerError) {
      if (json) print({ error: err.error });
      io.stderr(`error: ${oneLine(err.message)}\n`);
      return 1;
    }
    io.stderr(`error: ${oneLine(err instanceof Error ? err.message : String(err))}\n`);
    return 1;
  }
}
