/**
 * Which key-encryption key seals the secrets of a database (envelope private keys, signing keys,
 * webhook signing secrets, gateway keys). It is the KEK of the deps' gateway registry
 * (`createGatewayRegistry`, built by main.ts from KUPAH_MASTER_KEY or DATA_DIR/master-key), read
 * at each use so that a registry replaced at run time (a restart with other keys, in tests) is
 * followed. `bindKeyEncryption(deps)` (called by `createApp` and the webhook dispatcher) remembers
 * the deps of a database for the services that are handed only the database.
 *
 * A registry without a KEK (tests' static registry) gets a key made for this process: values
 * sealed under it open for every database of the process, and for nothing after a restart. The
 * server proper always has a real KEK.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../db/database.ts';
import { type GatewayRegistry, kekOf } from '../gateway/registry.ts';
import { type KeyEncryptionKey, keyEncryptionKey } from './key-encryption.ts';

let processKek: KeyEncryptionKey | undefined;

/** The key of this process, for deps without a KEK (made on first use, never written anywhere). */
function temporaryKek(): KeyEncryptionKey {
  processKek ??= keyEncryptionKey(randomBytes(32));
  return processKek;
}

const bound = new WeakMap<Db, { gateways: GatewayRegistry }>();

/** Remember where the KEK of `deps.db` comes from (its deps' gateway registry). */
export function bindKeyEncryption(deps: { db: Db; gateways: GatewayRegistry }): void {
  bound.set(deps.db, deps);
}

/** The KEK of these deps: their registry's, or the process's temporary key. */
export function kekOfDeps(deps: { db: Db; gateways: GatewayRegistry }): KeyEncryptionKey {
  bindKeyEncryption(deps);
  return kekOf(deps.gateways) ?? temporaryKek();
}

/** The KEK of a database whose deps were bound (else the process's temporary key). */
export function kekOfDb(db: Db): KeyEncryptionKey {
  const deps = bound.get(db);
  return (deps && kekOf(deps.gateways)) ?? temporaryKek();
}
