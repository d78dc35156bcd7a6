/**
 * The server's envelope keys, one set per organisation. Devices seal card and bank fields under
 * their organisation's newest key; every key of the organisation not retired still opens what was
 * sealed under it, so a rotation never strands queued items. A box sealed under another
 * organisation's key does not open (its kid is unknown here).
 *
 * Private keys are stored sealed under the server's key-encryption key (`secrets/server-kek.ts`);
 * rows of earlier versions that hold one in clear are sealed the first time they are loaded (and
 * by `secrets rewrap`). Retiring a key destroys its private part.
 *
 * Every key handed to a device is signed with the organisation's signing key (ECDSA P-256, sealed
 * likewise), whose public half the device pins when it pairs: a device adopts no key the server
 * did not sign. The shared key of earlier versions (no organisation) still opens what was sealed
 * under it until it is retired, but is never handed out again.
 *
 * Keys are cached per database and organisation for a few seconds so that every push does not read
 * them; an unknown kid reloads at once (another instance may have rotated).
 */
import type { EnvelopeKey, EnvelopePublicJwk } from '@kupah/contracts';
import { ERROR_CODES } from '@kupah/contracts';
import {
  createOpener,
  EnvelopeError,
  type EnvelopePrivateJwkInput,
  generateEnvelopeKeyPair,
  generateSigningKeyPair,
  importSigningKey,
  type SigningPrivateJwk,
  signEnvelopeKey,
} from '@kupah/envelope';
import type { Db, Sql } from '../db/database.ts';
import { ApiError, notFound } from '../http/errors.ts';
import { findOrgByGuid } from '../orgs/repo.ts';
import { sealClearSecrets } from '../secrets/at-rest.ts';
import type { KeyEncryptionKey } from '../secrets/key-encryption.ts';
import { kekOfDb } from '../secrets/server-kek.ts';
import {
  devicesHoldingKid,
  envelopeKeyAad,
  findSigningKey,
  insertEnvelopeKey,
  insertSigningKey,
  listEnvelopeKeys,
  lockEnvelopeKeys,
  retireEnvelopeKey,
  type StoredEnvelopeKey,
  signingKeyAad,
} from './repo.ts';

const CACHE_MS = 5_000;

/** An organisation as the key functions need it: its id, and its GUID (the signing context). */
export interface KeyOrg {
  id: number;
  guid: string;
}

interface Loaded {
  at: number;
  /** The current key, signed. */
  current: EnvelopeKey;
  signingKey: EnvelopePublicJwk;
  opener: ReturnType<typeof createOpener>;
}

const cache = new WeakMap<Db, Map<number, Loaded>>();
const swept = new WeakSet<Db>();

const publicJwkOf = (jwk: object): EnvelopePublicJwk => {
  const { kty, crv, x, y } = jwk as EnvelopePublicJwk;
  return { kty, crv, x, y };
};

/** A new key pair for the organisation, its private part sealed. */
async function insertNewKey(sql: Sql, kek: KeyEncryptionKey, orgId: number): Promise<string> {
  const pair = await generateEnvelopeKeyPair();
  await insertEnvelopeKey(sql, {
    kid: pair.kid,
    orgId,
    publicJwk: pair.publicJwk,
    privateSealed: kek.seal(JSON.stringify(pair.privateJwk), envelopeKeyAad(orgId, pair.kid)),
    kekId: kek.id,
  });
  return pair.kid;
}

/** The organisation's signing key (made, sealed, on first use). */
async function signingKeyOf(db: Db, kek: KeyEncryptionKey, orgId: number) {
  let stored = await findSigningKey(db, orgId);
  if (!stored) {
    await db.transaction(async (tx) => {
      await lockEnvelopeKeys(tx);
      if (await findSigningKey(tx, orgId)) return;
      const pair = await generateSigningKeyPair();
      await insertSigningKey(tx, {
        orgId,
        publicJwk: pair.publicJwk,
        privateSealed: kek.seal(JSON.stringify(pair.privateJwk), signingKeyAad(orgId)),
        kekId: kek.id,
      });
    });
    stored = await findSigningKey(db, orgId);
  }
  const privateJwk = JSON.parse(kek.open(stored!.privateSealed, signingKeyAad(orgId))) as SigningPrivateJwk;
  return { publicJwk: publicJwkOf(stored!.publicJwk), key: await importSigningKey(privateJwk) };
}

function privateOf(kek: KeyEncryptionKey, k: StoredEnvelopeKey): EnvelopePrivateJwkInput {
  if (k.privateSealed) return JSON.parse(kek.open(k.privateSealed, envelopeKeyAad(k.orgId, k.kid)));
  if (k.privateJwk) return k.privateJwk as EnvelopePrivateJwkInput;
  throw new Error(`envelope key ${k.kid} has no private part`);
}

async function load(db: Db, org: KeyOrg): Promise<Loaded> {
  const kek = kekOfDb(db);
  if (!swept.has(db)) {
    // Rows of earlier versions (a clear private key, a clear webhook secret) are sealed now.
    await sealClearSecrets(db, kek);
    swept.add(db);
  }
  const live = (ks: StoredEnvelopeKey[]) => ks.filter((k) => !k.retiredAt);
  let keys = live(await listEnvelopeKeys(db, org.id));
  if (!keys.some((k) => k.orgId === org.id)) {
    await db.transaction(async (tx) => {
      await lockEnvelopeKeys(tx);
      if (live(await listEnvelopeKeys(tx, org.id)).some((k) => k.orgId === org.id)) return;
      await insertNewKey(tx, kek, org.id);
    });
    keys = live(await listEnvelopeKeys(db, org.id));
  }
  if (keys.some((k) => !k.privateSealed)) {
    await sealClearSecrets(db, kek);
    keys = live(await listEnvelopeKeys(db, org.id));
  }
  const own = keys.find((k) => k.orgId === org.id)!;
  const signing = await signingKeyOf(db, kek, org.id);
  const current: EnvelopeKey = { kid: own.kid, jwk: publicJwkOf(own.publicJwk) };
  const loaded: Loaded = {
    at: Date.now(),
    current: { ...current, sig: await signEnvelopeKey(signing.key, org.guid, current) },
    signingKey: signing.publicJwk,
    opener: createOpener(keys.map((k) => ({ kid: k.kid, privateJwk: privateOf(kek, k) }))),
  };
  let perOrg = cache.get(db);
  if (!perOrg) {
    perOrg = new Map();
    cache.set(db, perOrg);
  }
  perOrg.set(org.id, loaded);
  return loaded;
}

async function loaded(db: Db, org: KeyOrg): Promise<Loaded> {
  const hit = cache.get(db)?.get(org.id);
  return hit && Date.now() - hit.at < CACHE_MS ? hit : load(db, org);
}

/** The organisation's key new items are sealed with (made on first use), signed. */
export async function currentEnvelopeKey(db: Db, org: KeyOrg): Promise<EnvelopeKey> {
  return (await loaded(db, org)).current;
}

/** The organisation's public signing key: what a device pins when it pairs. */
export async function signingPublicKey(db: Db, org: KeyOrg): Promise<EnvelopePublicJwk> {
  return (await loaded(db, org)).signingKey;
}

/** Opens a box sealed under any live key of the organisation (never another organisation's). */
export async function envelopeOpener(
  db: Db,
  org: KeyOrg,
): Promise<{ open(box: unknown, aad: string): Promise<unknown> }> {
  const first = await loaded(db, org);
  return {
    async open(box, aad) {
      try {
        return await first.opener.open(box, aad);
      } catch (err) {
        if (!(err instanceof EnvelopeError) || err.code !== 'UNKNOWN_KEY') throw err;
        return (await load(db, org)).opener.open(box, aad);
      }
    },
  };
}

/** Every key, newest first, with its organisation (null: the shared key of earlier versions). */
export async function listKeys(db: Db) {
  const keys = await listEnvelopeKeys(db);
  const guids = new Map<number, string>();
  for (const r of await db.query<{ id: string | number; guid: string }>('SELECT id, guid FROM orgs')) {
    guids.set(Number(r.id), String(r.guid));
  }
  return {
    keys: await Promise.all(
      keys.map(async (k) => ({
        kid: k.kid,
        orgGuid: k.orgId === null ? null : (guids.get(k.orgId) ?? null),
        createdAt: k.createdAt.toISOString(),
        retiredAt: k.retiredAt?.toISOString() ?? null,
        devicesHoldingItems: k.retiredAt ? [] : await devicesHoldingKid(db, k.kid),
      })),
    ),
  };
}

/**
 * A new current key for the organisation (`orgGuid`), or for every organisation that has one
 * when it is omitted; older keys keep opening what devices still hold. `kid` is the new key when
 * one was made.
 */
export async function rotateKey(db: Db, orgGuid?: string) {
  const kek = kekOfDb(db);
  let orgIds: number[];
  if (orgGuid !== undefined) {
    const org = await findOrgByGuid(db, orgGuid);
    if (!org) throw notFound(`Organisation ${orgGuid}`);
    orgIds = [org.id];
  } else {
    orgIds = [
      ...new Set(
        (await listEnvelopeKeys(db)).flatMap((k) => (k.orgId !== null && !k.retiredAt ? [k.orgId] : [])),
      ),
    ];
  }
  const made: string[] = [];
  await db.transaction(async (tx) => {
    await lockEnvelopeKeys(tx);
    for (const orgId of orgIds) made.push(await insertNewKey(tx, kek, orgId));
  });
  cache.delete(db);
  return { kid: made.length === 1 ? made[0]! : null, rotated: made, ...(await listKeys(db)) };
}

/**
 * Retire a key and destroy its private part: refused while it is its organisation's current key,
 * or while a live device reported items sealed under it in its last push (they would become
 * impossible to charge).
 */
export async function retireKey(db: Db, kid: string) {
  const keys = await listEnvelopeKeys(db);
  const key = keys.find((k) => k.kid === kid);
  if (!key) throw notFound(`Envelope key ${kid}`);
  const current = keys.find((k) => !k.retiredAt && k.orgId !== null && k.orgId === key.orgId);
  if (current?.kid === kid) {
    throw new ApiError(409, ERROR_CODES.INVALID_STATE, `${kid} is the current key: rotate first`);
  }
  const holders = await devicesHoldingKid(db, kid);
  if (holders.length > 0) {
    throw new ApiError(
      409,
      ERROR_CODES.INVALID_STATE,
      `Devices still hold items sealed under ${kid}: ${holders.join(', ')}; they must sync first`,
    );
  }
  await retireEnvelopeKey(db, kid);
  cache.delete(db);
  return listKeys(db);
}
