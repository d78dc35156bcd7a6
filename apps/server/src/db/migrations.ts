/**
 * One set of migrations for PGlite and PostgreSQL, applied at start in order, each once,
 * under an advisory lock so several server instances starting together do not race.
 */
import type { Db } from './database.ts';

export const MIGRATIONS: readonly { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: 'core',
    sql: `
CREATE SEQUENCE receipt_seq START 100001;
CREATE SEQUENCE donor_seq START 100001;
CREATE SEQUENCE collector_seq START 1001;
CREATE SEQUENCE schedule_seq START 5001;

CREATE TABLE orgs (
  id bigserial PRIMARY KEY,
  guid uuid NOT NULL UNIQUE,
  name text NOT NULL,
  currencies text[] NOT NULL,
  settings jsonb NOT NULL DEFAULT '{}'::jsonb,
  campaign_counter int NOT NULL DEFAULT 0,
  reason_counter int NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs(id),
  key_hash text NOT NULL UNIQUE,
  masked text NOT NULL,
  name text,
  sandbox boolean NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);

CREATE TABLE sources (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs(id),
  guid_hash text NOT NULL UNIQUE,
  masked text NOT NULL,
  name text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('device', 'external')),
  sandbox boolean NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);

CREATE TABLE donors (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs(id),
  account_num text NOT NULL,
  title text, first_name text, last_name text,
  title_hebrew text, first_name_hebrew text, last_name_hebrew text, suffix_hebrew text,
  phones jsonb NOT NULL DEFAULT '[]'::jsonb,
  emails jsonb NOT NULL DEFAULT '[]'::jsonb,
  addresses jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, account_num)
);
CREATE INDEX donors_name ON donors (org_id, lower(last_name), lower(first_name));

CREATE TABLE collectors (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs(id),
  account_num text NOT NULL,
  title text, first_name text, last_name text,
  title_hebrew text, first_name_hebrew text, last_name_hebrew text, suffix_hebrew text,
  phones jsonb NOT NULL DEFAULT '[]'::jsonb,
  emails jsonb NOT NULL DEFAULT '[]'::jsonb,
  addresses jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, account_num)
);

CREATE TABLE campaigns (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs(id),
  number int NOT NULL,
  name text,
  friendly_name text,
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, number)
);

CREATE TABLE reasons (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs(id),
  number int NOT NULL,
  name text,
  name_hebrew text,
  home_phone text,
  cell_phone text,
  email text,
  campaign_number int,
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, number)
);

CREATE TABLE schedules (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs(id),
  schedule_num bigint NOT NULL UNIQUE,
  status text NOT NULL CHECK (status IN ('active', 'failed', 'completed', 'cancelled', 'paused')),
  handling_mode text NOT NULL,
  frequency text NOT NULL,
  start_date date NOT NULL,
  payments_count int NOT NULL,
  total_minor bigint NOT NULL,
  first_minor bigint NOT NULL,
  per_payment_minor bigint NOT NULL,
  currency text NOT NULL,
  method text NOT NULL,
  instrument jsonb NOT NULL,
  donor_id bigint REFERENCES donors(id),
  campaign_id bigint REFERENCES campaigns(id),
  collector_id bigint REFERENCES collectors(id),
  reasons jsonb NOT NULL DEFAULT '[]'::jsonb,
  special_days jsonb NOT NULL DEFAULT '{}'::jsonb,
  anniversary_rule text NOT NULL DEFAULT 'anniversary',
  source_id bigint REFERENCES sources(id),
  api_key_id bigint REFERENCES api_keys(id),
  unique_transaction_id text NOT NULL,
  note text,
  device jsonb,
  is_anonymous boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE payments (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs(id),
  receipt_num text NOT NULL UNIQUE,
  status text NOT NULL CHECK (status IN ('Success', 'Declined', 'Error', 'Voided')),
  amount_minor bigint NOT NULL CHECK (amount_minor > 0),
  currency text NOT NULL,
  method text NOT NULL,
  payment_date timestamptz NOT NULL,
  processed_at timestamptz NOT NULL DEFAULT now(),
  donor_id bigint REFERENCES donors(id),
  donor_created boolean NOT NULL DEFAULT false,
  campaign_id bigint REFERENCES campaigns(id),
  collector_id bigint REFERENCES collectors(id),
  schedule_id bigint REFERENCES schedules(id),
  instalment_seq int,
  source_id bigint REFERENCES sources(id),
  api_key_id bigint REFERENCES api_keys(id),
  unique_transaction_id text,
  note text,
  brand text,
  last4 text,
  expiry text,
  card_holder_name text,
  token text,
  gateway_name text NOT NULL,
  gateway_ref text,
  error_code text,
  error_message text,
  is_anonymous boolean NOT NULL DEFAULT false,
  device jsonb,
  voided_at timestamptz,
  void_reason text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX payments_org_created ON payments (org_id, created_at);

CREATE TABLE payment_reasons (
  payment_id bigint NOT NULL REFERENCES payments(id),
  reason_id bigint NOT NULL REFERENCES reasons(id),
  amount_minor bigint NOT NULL,
  PRIMARY KEY (payment_id, reason_id)
);

CREATE TABLE idempotency_keys (
  org_id bigint NOT NULL REFERENCES orgs(id),
  key text NOT NULL,
  operation text NOT NULL,
  request_hash text NOT NULL,
  status_code int,
  response jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, key)
);
CREATE INDEX idempotency_created ON idempotency_keys (created_at);

CREATE TABLE outbox_events (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs(id),
  event_type text NOT NULL CHECK (event_type IN ('payment', 'schedule', 'void')),
  event_id text NOT NULL UNIQUE,
  -- The exact JSON text that is signed and sent (the same bytes on every retry).
  payload text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE webhook_endpoints (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs(id),
  kind text NOT NULL CHECK (kind IN ('payment', 'schedule', 'void')),
  url text NOT NULL,
  secret text NOT NULL,
  previous_secret text,
  previous_expires_at timestamptz,
  disabled_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, kind)
);

CREATE TABLE server_state (
  key text PRIMARY KEY,
  value jsonb NOT NULL
);
`,
  },
  {
    version: 2,
    name: 'webhook deliveries',
    sql: `
ALTER TABLE webhook_endpoints ADD COLUMN failing_since timestamptz;
ALTER TABLE webhook_endpoints ADD COLUMN disabled_reason text;

CREATE TABLE webhook_deliveries (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs(id),
  event_id bigint NOT NULL REFERENCES outbox_events(id),
  endpoint_id bigint NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  status text NOT NULL CHECK (status IN ('pending', 'delivered', 'dead')),
  attempts int NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  last_status_code int,
  last_error text,
  created_at timestamptz NOT NULL,
  delivered_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_org ON webhook_deliveries (org_id, created_at);

CREATE TABLE webhook_attempts (
  id bigserial PRIMARY KEY,
  delivery_id bigint NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
  attempt int NOT NULL,
  started_at timestamptz NOT NULL,
  status_code int,
  latency_ms int NOT NULL,
  error text
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id);

CREATE TABLE admin_events (
  id bigserial PRIMARY KEY,
  org_id bigint REFERENCES orgs(id),
  kind text NOT NULL,
  detail jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);
`,
  },
  {
    version: 3,
    name: 'schedule instalments',
    sql: `
ALTER TABLE schedules ADD COLUMN gateway_ref text;
ALTER TABLE schedules ADD COLUMN il boolean NOT NULL DEFAULT false;
ALTER TABLE schedules ADD COLUMN shabbat_shift boolean NOT NULL DEFAULT true;
ALTER TABLE schedules ADD COLUMN paused_at timestamptz;

CREATE TABLE schedule_instalments (
  id bigserial PRIMARY KEY,
  schedule_id bigint NOT NULL REFERENCES schedules(id),
  sequence int NOT NULL,
  due_date date NOT NULL,
  nominal_date date NOT NULL,
  hebrew_date text NOT NULL,
  amount_minor bigint NOT NULL CHECK (amount_minor > 0),
  status text NOT NULL CHECK (status IN ('pending', 'paused', 'charged', 'missed', 'skipped', 'cancelled')),
  -- When to try next: the start of the due date in the org's time zone, or the time of a retry.
  due_at timestamptz NOT NULL,
  attempts int NOT NULL DEFAULT 0,
  payment_id bigint REFERENCES payments(id),
  last_error text,
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (schedule_id, sequence)
);
CREATE INDEX schedule_instalments_due ON schedule_instalments (due_at, id) WHERE status = 'pending';

-- At most one successful payment per instalment, whatever happens above the database.
CREATE UNIQUE INDEX payments_one_success_per_instalment ON payments (schedule_id, instalment_seq)
  WHERE schedule_id IS NOT NULL AND status IN ('Success', 'Voided');
`,
  },
  {
    version: 4,
    name: 'devices',
    sql: `
-- The server's envelope keys (ECDH P-256): devices seal card and bank fields under the public key.
CREATE TABLE envelope_keys (
  kid text PRIMARY KEY,
  public_jwk jsonb NOT NULL,
  private_jwk jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  retired_at timestamptz
);

-- A paired terminal: made with a short-lived pairing code, then holding a device source credential.
CREATE TABLE devices (
  id bigserial PRIMARY KEY,
  device_id text NOT NULL UNIQUE,
  org_id bigint NOT NULL REFERENCES orgs(id),
  name text NOT NULL,
  sandbox boolean NOT NULL,
  pairing_code_hash text UNIQUE,
  pairing_expires_at timestamptz,
  source_id bigint REFERENCES sources(id),
  paired_at timestamptz,
  revoked_at timestamptz,
  last_seen_at timestamptz,
  app_version text,
  queue_depth int,
  queue_total_minor bigint,
  queue_by_kid jsonb,
  last_push_ops int,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX devices_org ON devices (org_id, created_at);
CREATE UNIQUE INDEX devices_source ON devices (source_id) WHERE source_id IS NOT NULL;

-- Incremental pull: each reference row carries the id of the transaction that last wrote it. A
-- pull returns rows of transactions that have all finished (below the snapshot's xmin), so a
-- transaction that commits late is never skipped.
-- (One line: migrations are split into statements at a semicolon that ends a line.)
CREATE FUNCTION touch_change_xid() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.change_xid := pg_current_xact_id(); RETURN NEW; END $$;
ALTER TABLE campaigns ADD COLUMN change_xid xid8;
ALTER TABLE reasons ADD COLUMN change_xid xid8;
ALTER TABLE collectors ADD COLUMN change_xid xid8;
ALTER TABLE donors ADD COLUMN change_xid xid8;
UPDATE campaigns SET change_xid = pg_current_xact_id();
UPDATE reasons SET change_xid = pg_current_xact_id();
UPDATE collectors SET change_xid = pg_current_xact_id();
UPDATE donors SET change_xid = pg_current_xact_id();
ALTER TABLE campaigns ALTER COLUMN change_xid SET NOT NULL;
ALTER TABLE reasons ALTER COLUMN change_xid SET NOT NULL;
ALTER TABLE collectors ALTER COLUMN change_xid SET NOT NULL;
ALTER TABLE donors ALTER COLUMN change_xid SET NOT NULL;
CREATE TRIGGER campaigns_change BEFORE INSERT OR UPDATE ON campaigns FOR EACH ROW EXECUTE FUNCTION touch_change_xid();
CREATE TRIGGER reasons_change BEFORE INSERT OR UPDATE ON reasons FOR EACH ROW EXECUTE FUNCTION touch_change_xid();
CREATE TRIGGER collectors_change BEFORE INSERT OR UPDATE ON collectors FOR EACH ROW EXECUTE FUNCTION touch_change_xid();
CREATE TRIGGER donors_change BEFORE INSERT OR UPDATE ON donors FOR EACH ROW EXECUTE FUNCTION touch_change_xid();
CREATE INDEX campaigns_change ON campaigns (org_id, change_xid, id);
CREATE INDEX reasons_change ON reasons (org_id, change_xid, id);
CREATE INDEX collectors_change ON collectors (org_id, change_xid, id);
CREATE INDEX donors_change ON donors (org_id, change_xid, id);
`,
  },
  {
    version: 5,
    name: 'charges outside transactions, per-organisation gateways',
    sql: `
-- A payment is claimed (Pending) before the gateway is called, and its outcome recorded after.
ALTER TABLE payments DROP CONSTRAINT payments_status_check;
ALTER TABLE payments ADD CONSTRAINT payments_status_check CHECK (status IN ('Pending', 'Success', 'Declined', 'Error', 'Voided'));
-- The key the gateway was (or will be) called with: Sola's xInvoice, the sandbox's idempotency key.
ALTER TABLE payments ADD COLUMN gateway_key text;
-- While Pending: 'sending' (a request is calling the gateway now) or 'in_doubt' (the call ended without
-- a known outcome). Recovery asks the gateway about rows in doubt, and about 'sending' rows whose
-- process died (older than the recovery lease).
ALTER TABLE payments ADD COLUMN gateway_state text CHECK (gateway_state IN ('sending', 'in_doubt'));
ALTER TABLE payments ADD COLUMN gateway_sent_at timestamptz;
ALTER TABLE payments ADD COLUMN recovery_after timestamptz;
ALTER TABLE payments ADD COLUMN recovery_attempts int NOT NULL DEFAULT 0;
ALTER TABLE payments ADD COLUMN recovery_note text;
ALTER TABLE payments ADD COLUMN resolved_at timestamptz;
-- What finishing a Pending payment needs besides the gateway's answer (webhook facts, what the
-- payment was for); cleared when the outcome is recorded. Never card data.
ALTER TABLE payments ADD COLUMN pending_context jsonb;
ALTER TABLE schedule_instalments DROP CONSTRAINT schedule_instalments_status_check;
ALTER TABLE schedule_instalments ADD CONSTRAINT schedule_instalments_status_check CHECK (status IN ('pending', 'charging', 'paused', 'charged', 'missed', 'skipped', 'cancelled'));
CREATE INDEX payments_pending ON payments (recovery_after, id) WHERE status = 'Pending';
-- uniqueTransactionId is unique per organisation forever (not only while its idempotency record lives).
CREATE UNIQUE INDEX payments_unique_transaction ON payments (org_id, unique_transaction_id)
  WHERE schedule_id IS NULL AND unique_transaction_id IS NOT NULL;
CREATE UNIQUE INDEX schedules_unique_transaction ON schedules (org_id, unique_transaction_id);
ALTER TABLE schedules DROP CONSTRAINT schedules_status_check;
ALTER TABLE schedules ADD CONSTRAINT schedules_status_check CHECK (status IN ('pending', 'active', 'failed', 'completed', 'cancelled', 'paused'));
-- The payment a request under this key is charging (its Pending row), for answers while in doubt.
ALTER TABLE idempotency_keys ADD COLUMN payment_id bigint;

-- The gateway an organisation's production sources charge through; the key is sealed under the
-- server's key-encryption key (never stored in clear). gateway_rev changes with every change, so
-- every instance's cache of the organisation's gateway notices it.
CREATE TABLE org_gateways (
  org_id bigint PRIMARY KEY REFERENCES orgs(id),
  provider text NOT NULL,
  url text,
  key_sealed text NOT NULL,
  key_last4 text NOT NULL,
  kek_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE orgs ADD COLUMN gateway_rev int NOT NULL DEFAULT 0;
`,
  },
  {
    version: 9,
    name: 'organisation contact keys (devices get contact details masked, with keyed hashes)',
    sql: `
-- The HMAC key (32 bytes, base64url) of the contact hashes devices get instead of donors' phone
-- numbers and e-mail addresses. Every paired device of the organisation holds it.
CREATE TABLE org_contact_keys (
  org_id bigint PRIMARY KEY REFERENCES orgs(id),
  key text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
`,
  },
  {
    version: 8,
    name: 'device operations first seen, offline limits, sealed data v2',
    sql: `
-- Every (device, opId) the server has been pushed, written on its first push whatever the answer:
-- the offline expiry counts from first sight too (a device's clock is not trusted alone), and the
-- offline total of a device is counted from these rows. amount_minor is set once the request is
-- read (the first instalment of a schedule); offline_verdict once the offline limits were judged.
CREATE TABLE device_ops_seen (
  device_id bigint NOT NULL REFERENCES devices(id),
  op_id text NOT NULL,
  kind text NOT NULL,
  first_seen_at timestamptz NOT NULL,
  device_created_at timestamptz NOT NULL,
  offline boolean NOT NULL DEFAULT false,
  amount_minor bigint,
  offline_verdict text CHECK (offline_verdict IN ('ok', 'over')),
  PRIMARY KEY (device_id, op_id)
);
CREATE INDEX device_ops_seen_offline ON device_ops_seen (device_id, device_created_at) WHERE offline;
-- Since when devices seal under the v2 additional data: v1 boxes are opened only for the offline
-- expiry window after it.
CREATE TABLE device_sync_marks (
  name text PRIMARY KEY,
  at timestamptz NOT NULL
);
INSERT INTO device_sync_marks (name, at) VALUES ('seal_aad_v2_since', now());
`,
  },
  {
    version: 6,
    name: 'envelope keys per organisation, sealed at rest; signing keys',
    sql: `
-- Envelope keys belong to an organisation (NULL: the one shared key of earlier versions, which
-- still opens what was sealed under it until it is retired, but is never handed out again). The
-- private key is sealed under the server's key-encryption key (private_sealed, kek_id); rows of
-- earlier versions hold it in clear in private_jwk until the server seals it (first use, or
-- secrets rewrap). Retiring a key destroys its private part: both columns become NULL.
ALTER TABLE envelope_keys ADD COLUMN org_id bigint REFERENCES orgs(id);
ALTER TABLE envelope_keys ALTER COLUMN private_jwk DROP NOT NULL;
-- Keys retired before this version: their private part goes now.
UPDATE envelope_keys SET private_jwk = NULL WHERE retired_at IS NOT NULL;
ALTER TABLE envelope_keys ADD COLUMN private_sealed text;
ALTER TABLE envelope_keys ADD COLUMN kek_id text;
CREATE INDEX envelope_keys_org ON envelope_keys (org_id, created_at DESC);
-- The key an organisation's envelope keys are signed with (ECDSA P-256): devices pin its public
-- half when they pair and adopt only envelope keys it signed. The private half is sealed.
CREATE TABLE signing_keys (
  org_id bigint PRIMARY KEY REFERENCES orgs(id),
  public_jwk jsonb NOT NULL,
  private_sealed text NOT NULL,
  kek_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
`,
  },
  {
    version: 10,
    name: 'admin audit log',
    sql: `
-- Every admin action (mutating admin API calls, reads of secrets) and every refused admin
-- request: when, who (the credential's identity, never the credential), what (method, route,
-- organisation, target ids, arguments without secrets), from where, and the outcome.
CREATE TABLE admin_audit (
  id bigserial PRIMARY KEY,
  at timestamptz NOT NULL,
  actor text NOT NULL,
  method text NOT NULL,
  route text NOT NULL,
  path text NOT NULL,
  org_guid text,
  target jsonb NOT NULL DEFAULT '{}',
  summary jsonb,
  remote_addr text,
  user_agent text,
  status int NOT NULL,
  outcome text NOT NULL CHECK (outcome IN ('ok', 'failed', 'refused'))
);
CREATE INDEX admin_audit_at ON admin_audit (at DESC, id DESC);
CREATE INDEX admin_audit_org ON admin_audit (org_guid, at DESC);
`,
  },
  {
    version: 7,
    name: 'abuse limits: shared rate limits, card attempts, blocks and security events',
    sql: `
-- Token buckets of the per-credential rate limit, shared by every instance: one UPSERT per request
-- refills and takes (http/rate-limit.ts). full_at: when the bucket is full again
-- (a row past it is the same as no row, and may be purged).
CREATE TABLE rate_limits (
  key text PRIMARY KEY,
  tokens double precision NOT NULL,
  at timestamptz NOT NULL,
  full_at timestamptz NOT NULL,
  granted boolean NOT NULL
);
CREATE INDEX rate_limits_full ON rate_limits (full_at);

-- One row per payment charged with a card, bank account or charity card: its keyed fingerprint
-- (HMAC under a key derived from the key-encryption key; never the number, never the CVV).
CREATE TABLE card_attempts (
  payment_id bigint PRIMARY KEY REFERENCES payments(id) ON DELETE CASCADE,
  org_id bigint NOT NULL REFERENCES orgs(id),
  fingerprint text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX card_attempts_card ON card_attempts (org_id, fingerprint, created_at);

-- Verifications of an instrument that charge nothing (a schedule starting later is verified with
-- the gateway): counted like payments, with their outcome here.
CREATE TABLE card_verifications (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs(id),
  credential text NOT NULL,
  fingerprint text NOT NULL,
  status text NOT NULL CHECK (status IN ('Success', 'Declined', 'Error')),
  created_at timestamptz NOT NULL
);
CREATE INDEX card_verifications_card ON card_verifications (org_id, fingerprint, created_at);
CREATE INDEX card_verifications_declined ON card_verifications (org_id, credential, created_at)
  WHERE status = 'Declined';

-- Declines per credential, counted before each charge.
CREATE INDEX payments_declined_source ON payments (source_id, processed_at)
  WHERE status = 'Declined' AND source_id IS NOT NULL;
CREATE INDEX payments_declined_api_key ON payments (api_key_id, processed_at)
  WHERE status = 'Declined' AND api_key_id IS NOT NULL;

-- A credential (subject 'credential:source:12') or a card ('card:<fingerprint>') refused until.
CREATE TABLE abuse_blocks (
  org_id bigint NOT NULL REFERENCES orgs(id),
  subject text NOT NULL,
  until timestamptz NOT NULL,
  reason text NOT NULL,
  PRIMARY KEY (org_id, subject)
);

-- What an operator must look at: blocks for card testing (never card data in details).
CREATE TABLE security_events (
  id bigserial PRIMARY KEY,
  org_id bigint REFERENCES orgs(id),
  credential text,
  kind text NOT NULL,
  details jsonb NOT NULL DEFAULT '{}'::jsonb,
  at timestamptz NOT NULL
);
CREATE INDEX security_events_org ON security_events (org_id, at);

-- Request hashes made before this version covered the card number and CVV (a CVV could be
-- brute-forced from one with the key beside it): erased. A retry under such a key replays its answer.
UPDATE idempotency_keys SET request_hash = 'legacy' WHERE operation IN ('Charge', 'SchedulePayment');
`,
  },
  {
    version: 11,
    name: 'idempotency answers kept as sent',
    sql: `
-- json (not jsonb) keeps the answer's text as it was sent, key order included, so a replay is
-- byte-identical to the first answer (jsonb reorders keys). Answers stored before stay as they are.
ALTER TABLE idempotency_keys ALTER COLUMN response TYPE json USING response::json;
`,
  },
  {
    version: 12,
    name: 'read API: payments by time, totals from an index, webhook events by receipt',
    sql: `
-- The payment (or first payment of a schedule) an event is about, so a payment's webhook
-- deliveries can be listed. Events written before this version are filled in from their payload.
ALTER TABLE outbox_events ADD COLUMN receipt_num text;
UPDATE outbox_events SET receipt_num = COALESCE(payload::jsonb->>'paymentNumber', payload::jsonb->'firstPayment'->>'paymentNumber');
CREATE INDEX outbox_events_receipt ON outbox_events (org_id, receipt_num) WHERE receipt_num IS NOT NULL;
-- Totals group by the organisation's day a payment was taken (its time zone then), kept on the row
-- so that no time-zone conversion runs per row; reason_count says whether a payment is split
-- over reasons (those are summed from payment_reasons). Both are set when the payment is written.
ALTER TABLE payments ADD COLUMN local_day date;
ALTER TABLE payments ADD COLUMN reason_count smallint NOT NULL DEFAULT 0;
UPDATE payments p SET local_day = (p.created_at AT TIME ZONE COALESCE(o.settings->>'timezone', 'America/New_York'))::date FROM orgs o WHERE o.id = p.org_id;
UPDATE payments p SET reason_count = x.n FROM (SELECT payment_id, count(*) AS n FROM payment_reasons GROUP BY payment_id) x WHERE x.payment_id = p.id;
CREATE FUNCTION payments_local_day() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.local_day IS NULL THEN NEW.local_day := (NEW.created_at AT TIME ZONE COALESCE((SELECT settings->>'timezone' FROM orgs WHERE id = NEW.org_id), 'America/New_York'))::date; END IF; RETURN NEW; END $$;
CREATE TRIGGER payments_local_day BEFORE INSERT ON payments FOR EACH ROW EXECUTE FUNCTION payments_local_day();
-- A reason's share carries what its totals group and filter by (copied from its payment when
-- written; the status follows the payment's), so totals by reason read payment_reasons alone.
ALTER TABLE payment_reasons ADD COLUMN org_id bigint;
ALTER TABLE payment_reasons ADD COLUMN created_at timestamptz;
ALTER TABLE payment_reasons ADD COLUMN currency text;
ALTER TABLE payment_reasons ADD COLUMN status text;
UPDATE payment_reasons pr SET org_id = p.org_id, created_at = p.created_at, currency = p.currency, status = p.status FROM payments p WHERE p.id = pr.payment_id;
CREATE FUNCTION payment_reasons_copy() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN SELECT p.org_id, p.created_at, p.currency, p.status INTO NEW.org_id, NEW.created_at, NEW.currency, NEW.status FROM payments p WHERE p.id = NEW.payment_id; RETURN NEW; END $$;
CREATE TRIGGER payment_reasons_copy BEFORE INSERT ON payment_reasons FOR EACH ROW EXECUTE FUNCTION payment_reasons_copy();
CREATE FUNCTION payments_status_to_reasons() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN UPDATE payment_reasons SET status = NEW.status WHERE payment_id = NEW.id; RETURN NULL; END $$;
CREATE TRIGGER payments_status_to_reasons AFTER UPDATE OF status ON payments FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status AND NEW.reason_count > 0) EXECUTE FUNCTION payments_status_to_reasons();
CREATE INDEX payment_reasons_totals ON payment_reasons (org_id, created_at) INCLUDE (reason_id, currency, status, amount_minor);
-- Newest first with a (created_at, id) cursor; totals over a time range read this index alone
-- (an index-only scan: every column the totals group or sum by is included).
CREATE INDEX payments_org_created_id ON payments (org_id, created_at DESC, id DESC);
CREATE INDEX payments_totals ON payments (org_id, created_at) INCLUDE (status, currency, amount_minor, method, source_id, collector_id, campaign_id, local_day, reason_count);
DROP INDEX payments_org_created;
CREATE INDEX payments_donor ON payments (donor_id, created_at DESC) WHERE donor_id IS NOT NULL;
CREATE INDEX payments_collector ON payments (collector_id, created_at DESC) WHERE collector_id IS NOT NULL;
CREATE INDEX payments_schedule ON payments (schedule_id) WHERE schedule_id IS NOT NULL;
CREATE INDEX payment_reasons_reason ON payment_reasons (reason_id);
-- Account numbers are looked up case-insensitively (d100001 is D100001).
CREATE INDEX donors_account_upper ON donors (org_id, upper(account_num));
CREATE INDEX collectors_account_upper ON collectors (org_id, upper(account_num));
`,
  },
  {
    version: 13,
    name: 'device shift closes',
    sql: `
-- A cashier or collector closed the shift on a device: the device's totals since the last close,
-- and the server's own totals of the same shift when it was recorded. close_id is the device's.
CREATE TABLE device_shifts (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs(id),
  device_id bigint NOT NULL REFERENCES devices(id),
  close_id uuid NOT NULL,
  opened_at timestamptz NOT NULL,
  closed_at timestamptz NOT NULL,
  closed_by text,
  device_totals jsonb NOT NULL,
  server_totals jsonb NOT NULL,
  recorded_at timestamptz NOT NULL,
  UNIQUE (device_id, close_id)
);
CREATE INDEX device_shifts_org ON device_shifts (org_id, closed_at DESC);
CREATE INDEX device_shifts_device ON device_shifts (device_id, closed_at DESC);
`,
  },
  {
    version: 14,
    name: 'receipt e-mails',
    sql: `
-- Each e-mail of a receipt (or correction, copy, year-end statement) to one address: written in
-- the transaction that records the payment (or void), sent by the receipt mailer of any instance
-- (claimed with FOR UPDATE SKIP LOCKED, leased by moving next_attempt_at), retried with back-off.
-- message_id is fixed when the row is written: a resend after a crash carries the same Message-ID.
-- The address is kept here only to deliver (and correct) the receipt, never on a donor record.
CREATE TABLE receipt_deliveries (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs(id),
  payment_id bigint REFERENCES payments(id),
  donor_id bigint REFERENCES donors(id),
  year int,
  kind text NOT NULL CHECK (kind IN ('receipt', 'correction', 'copy', 'annual')),
  to_address text NOT NULL,
  language text NOT NULL CHECK (language IN ('en', 'he')),
  status text NOT NULL CHECK (status IN ('pending', 'sent', 'bounced', 'failed')),
  attempts int NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  message_id text NOT NULL UNIQUE,
  last_error text,
  smtp_response text,
  created_at timestamptz NOT NULL,
  sent_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((kind = 'annual') = (payment_id IS NULL)),
  CHECK ((kind = 'annual') = (donor_id IS NOT NULL AND year IS NOT NULL))
);
-- Once per receipt, kind and address; a copy waits at most once per address; a statement once per donor and year.
CREATE UNIQUE INDEX receipt_deliveries_once ON receipt_deliveries (payment_id, kind, lower(to_address)) WHERE kind IN ('receipt', 'correction');
CREATE UNIQUE INDEX receipt_deliveries_copy ON receipt_deliveries (payment_id, lower(to_address)) WHERE kind = 'copy' AND status = 'pending';
CREATE UNIQUE INDEX receipt_deliveries_annual ON receipt_deliveries (donor_id, year, lower(to_address)) WHERE kind = 'annual';
CREATE INDEX receipt_deliveries_due ON receipt_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX receipt_deliveries_org ON receipt_deliveries (org_id, created_at DESC, id DESC);
CREATE INDEX receipt_deliveries_payment ON receipt_deliveries (payment_id) WHERE payment_id IS NOT NULL;
`,
  },
  {
    version: 15,
    name: 'refunds',
    sql: `
-- Refunds after settlement (full or partial): Success → PartiallyRefunded → Refunded.
ALTER TABLE payments DROP CONSTRAINT payments_status_check;
ALTER TABLE payments ADD CONSTRAINT payments_status_check CHECK (status IN ('Pending', 'Success', 'Declined', 'Error', 'Voided', 'PartiallyRefunded', 'Refunded'));
-- What was refunded so far (succeeded refunds only), kept on the payment for lists and totals.
ALTER TABLE payments ADD COLUMN refunded_minor bigint NOT NULL DEFAULT 0;
ALTER TABLE payments ADD CONSTRAINT payments_refunded_le_amount CHECK (refunded_minor >= 0 AND refunded_minor <= amount_minor);
ALTER TABLE payments ADD COLUMN refunded_at timestamptz;
-- A refunded instalment still is the one charge of its instalment.
DROP INDEX payments_one_success_per_instalment;
CREATE UNIQUE INDEX payments_one_success_per_instalment ON payments (schedule_id, instalment_seq)
  WHERE schedule_id IS NOT NULL AND status IN ('Success', 'Voided', 'PartiallyRefunded', 'Refunded');
-- Totals read refunded_minor from the covering index too.
DROP INDEX payments_totals;
CREATE INDEX payments_totals ON payments (org_id, created_at) INCLUDE (status, currency, amount_minor, refunded_minor, method, source_id, collector_id, campaign_id, local_day, reason_count);
-- Each refund asked for: claimed 'pending' (with its gateway state, as a payment is) before the
-- gateway is called outside any transaction, then 'succeeded' or 'failed'. A pending one counts
-- against what remains, so concurrent refunds never exceed the amount charged.
CREATE TABLE refunds (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs(id),
  payment_id bigint NOT NULL REFERENCES payments(id),
  amount_minor bigint NOT NULL CHECK (amount_minor > 0),
  currency text NOT NULL,
  reason text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  unique_transaction_id text NOT NULL,
  -- Who asked: the masked API key, or a console user's id.
  actor text,
  gateway_name text NOT NULL,
  gateway_key text NOT NULL,
  gateway_ref text,
  error_code text,
  error_message text,
  gateway_state text CHECK (gateway_state IN ('sending', 'in_doubt')),
  gateway_sent_at timestamptz,
  recovery_after timestamptz,
  recovery_attempts int NOT NULL DEFAULT 0,
  recovery_note text,
  -- What recording the outcome needs (the idempotency answer's parts, the webhook facts).
  pending_context jsonb,
  created_at timestamptz NOT NULL,
  resolved_at timestamptz
);
CREATE UNIQUE INDEX refunds_unique_transaction ON refunds (org_id, unique_transaction_id);
CREATE INDEX refunds_payment ON refunds (payment_id, id);
CREATE INDEX refunds_recovery ON refunds (recovery_after) WHERE status = 'pending';
-- Each refund queues its own corrected receipt (a partial refund, then the rest: two corrections).
ALTER TABLE receipt_deliveries ADD COLUMN refund_id bigint REFERENCES refunds(id);
DROP INDEX receipt_deliveries_once;
CREATE UNIQUE INDEX receipt_deliveries_once ON receipt_deliveries (payment_id, kind, lower(to_address), COALESCE(refund_id, 0)) WHERE kind IN ('receipt', 'correction');
`,
  },
  {
    version: 16,
    name: 'console users, sessions, one-time links and sign-in throttling',
    sql: `
-- People who sign in to the organisation's web console. An e-mail address is unique across all
-- organisations (case-insensitively): sign-in by e-mail needs no organisation picker.
-- password_hash: scrypt$<N>$<r>$<p>$<salt>$<key> (console/password.ts); null until an invitation
-- is accepted.
CREATE TABLE console_users (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs(id),
  email text NOT NULL,
  name text,
  role text NOT NULL CHECK (role IN ('viewer', 'manager', 'owner')),
  password_hash text,
  disabled_at timestamptz,
  last_sign_in_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX console_users_email ON console_users (lower(email));
CREATE INDEX console_users_org ON console_users (org_id, id);

-- A signed-in browser. id: SHA-256 (hex) of the cookie's random token (the token is never stored).
-- Ends after 12 h without a request (last_seen_at) or at expires_at (7 days after sign-in).
CREATE TABLE console_sessions (
  id text PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES console_users(id) ON DELETE CASCADE,
  csrf_token text NOT NULL,
  created_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  ip text,
  user_agent text
);
CREATE INDEX console_sessions_user ON console_sessions (user_id);
CREATE INDEX console_sessions_expires ON console_sessions (expires_at);

-- One-time links (invitation: 7 days; password reset: 1 hour). id: SHA-256 (hex) of the token.
CREATE TABLE console_links (
  id text PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES console_users(id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('invitation', 'reset')),
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);
CREATE INDEX console_links_user ON console_links (user_id, kind);

-- Failed sign-ins, shared by every instance: one row per e-mail address tried (whether or not an
-- account has it: a locked-out answer says nothing about existence) and one per client address.
-- key: 'email:<lower-case address>' or 'addr:<ip>'.
CREATE TABLE console_signin_failures (
  key text PRIMARY KEY,
  failures int NOT NULL,
  window_start timestamptz NOT NULL,
  locked_until timestamptz
);

-- The console's audit view: one organisation's entries, newest first.
CREATE INDEX admin_audit_org_id ON admin_audit (lower(org_guid), id DESC);
`,
  },
  {
    version: 17,
    name: 'console: device locations, merged donors',
    sql: `
-- Where a terminal stands (the console names it); free text, null when not said.
ALTER TABLE devices ADD COLUMN location text;
-- A donor merged into another (console/donor-merge.ts): the kept donor and when. The merged row
-- stays (its account number still finds the kept donor), its payments and schedules move.
ALTER TABLE donors ADD COLUMN merged_into bigint REFERENCES donors(id);
ALTER TABLE donors ADD COLUMN merged_at timestamptz;
CREATE TABLE donor_merges (
  id bigserial PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES orgs(id),
  kept_donor_id bigint NOT NULL REFERENCES donors(id),
  merged_donor_id bigint NOT NULL REFERENCES donors(id),
  merged_account_num text NOT NULL,
  payments_moved int NOT NULL,
  schedules_moved int NOT NULL,
  merged_by text NOT NULL,
  merged_at timestamptz NOT NULL
);
CREATE INDEX donor_merges_kept ON donor_merges (org_id, kept_donor_id);
CREATE INDEX schedules_donor ON schedules (donor_id) WHERE donor_id IS NOT NULL;
`,
  },
];

const LOCK_ID = 727_172_001;

export async function migrate(db: Db): Promise<number[]> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_ID]);
    await tx.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set(
      (await tx.query<{ version: number }>('SELECT version FROM schema_migrations')).map((r) =>
        Number(r.version),
      ),
    );
    const applied: number[] = [];
    for (const m of [...MIGRATIONS].sort((a, b) => a.version - b.version)) {
      if (done.has(m.version)) continue;
      for (const stmt of splitStatements(m.sql)) await tx.query(stmt);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      applied.push(m.version);
    }
    return applied;
  });
}

/** Split a migration into statements (no semicolons inside our DDL's literals). */
function splitStatements(sql: string): string[] {
  return sql
    .split(/;\s*\n/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
