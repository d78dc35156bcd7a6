/**
 * The server's envelope keys. Devices seal card and bank fields under the newest key; every key
 * not retired still opens what was sealed under it, so a rotation never strands queued items.
 * Keys are cached per database for a few seconds so that every push does not read them; an
 * unknown kid reloads at once (another instance may have rotated).
 */
import type { EnvelopeKey } from '@kupah/contracts';
import { ERROR_CODES } from '@kupah/contracts';
import { createOpener, EnvelopeError, generateEnvelopeKeyPair } from '@kupah/envelope';
import type { Db } from '../db/database.ts';
import { ApiError, notFound } from '../http/errors.ts';
import {
  devicesHoldingKid,
  insertEnvelopeKey,
  listEnvelopeKeys,
  lockEnvelopeKeys,
  retireEnvelopeKey,
  type StoredEnvelopeKey,
} from './repo.ts';

const CACHE_MS = 5_000;

interface Loaded {
  at: number;
  current: EnvelopeKey;
  opener: ReturnType<typeof createOpener>;
}

const cache = new WeakMap<Db, Loaded>();

function publicKey(k: StoredEnvelopeKey): EnvelopeKey {
  const { kty, crv, x, y } = k.publicJwk as { kty: 'EC'; crv: 'P-256'; x: string; y: string };
  return { kid: k.kid, jwk: { kty, crv, x, y } };
}

async function load(db: Db): Promise<Loaded> {
  let keys = (await listEnvelopeKeys(db)).filter((k) => !k.retiredAt);
  if (keys.length === 0) {
    await db.transaction(async (tx) => {
      await lockEnvelopeKeys(tx);
      if ((await listEnvelopeKeys(tx)).some((k) => !k.retiredAt)) return;
      const pair = await generateEnvelopeKeyPair();
      await insertEnvelopeKey(tx, { kid: pair.kid, publicJwk: pair.publicJwk, privateJwk: pair.privateJwk });
    });
    keys = (await listEnvelopeKeys(db)).filter((k) => !k.retiredAt);
  }
  const loaded: Loaded = {
    at: Date.now(),
    current: publicKey(keys[0]!),
    opener: createOpener(keys.map((k) => ({ kid: k.kid, privateJwk: k.privateJwk }))),
  };
  cache.set(db, loaded);
  return loaded;
}

async function loaded(db: Db): Promise<Loaded> {
  const hit = cache.get(db);
  return hit && Date.now() - hit.at < CACHE_MS ? hit : load(db);
}

/** The key new items are sealed with (made on first use). */
export async function currentEnvelopeKey(db: Db): Promise<EnvelopeKey> {
  return (await loaded(db)).current;
}

/** Opens a box sealed under any live key. */
export async function envelopeOpener(db: Db): Promise<{ open(box: unknown, aad: string): Promise<unknown> }> {
  const first = await loaded(db);
  return {
    async open(box, aad) {
      try {
        return await first.opener.open(box, aad);
      } catch (err) {
        if (!(err instanceof EnvelopeError) || err.code !== 'UNKNOWN_KEY') throw err;
        return (await load(db)).opener.open(box, aad);
      }
    },
  };
}

export async function listKeys(db: Db) {
  const keys = await listEnvelopeKeys(db);
  return {
    keys: await Promise.all(
      keys.map(async (k) => ({
        kid: k.kid,
        createdAt: k.createdAt.toISOString(),
        retiredAt: k.retiredAt?.toISOString() ?? null,
        devicesHoldingItems: k.retiredAt ? [] : await devicesHoldingKid(db, k.kid),
      })),
    ),
  };
}

/** A new current key; older keys keep opening what devices still hold. */
export async function rotateKey(db: Db) {
  const pair = await generateEnvelopeKeyPair();
  await db.transaction(async (tx) => {
    await lockEnvelopeKeys(tx);
    await insertEnvelopeKey(tx, { kid: pair.kid, publicJwk: pair.publicJwk, privateJwk: pair.privateJwk });
  });
  cache.delete(db);
  return { kid: pair.kid, ...(await listKeys(db)) };
}

/**
 * Retire a key: refused while it is the current key, or while a live device reported items
 * sealed under it in its last push (they would become impossible to charge).
 */
export async function retireKey(db: Db, kid: string) {
  const keys = await listEnvelopeKeys(db);
  const key = keys.find((k) => k.kid === kid);
  if (!key) throw notFound(`Envelope key ${kid}`);
  const live = keys.filter((k) => !k.retiredAt);
  if (live[0]?.kid === kid) {
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
