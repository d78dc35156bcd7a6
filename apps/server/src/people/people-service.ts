/**
 * SaveDonor / SaveCollector (4.3). Empty id creates; an existing id updates by merging. For donors
 * a field sent as null is ignored, an empty string or empty array deletes, and a valid but unknown
 * id creates the donor with that id. For collectors null deletes too, and an unknown id is a 404.
 */
import type { CollectorRecord, DonorRecord, PersonPatch } from '@kupah/contracts';
import { ERROR_CODES } from '@kupah/contracts';
import type { Caller } from '../auth/repo.ts';
import type { Sql } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import { ApiError, notFound, validationError } from '../http/errors.ts';
import { assertSameOrg, underIdempotencyKey } from '../payments/payment-service.ts';
import {
  ACCOUNT_PREFIX,
  insertPerson,
  lockPerson,
  type Person,
  type PersonFields,
  type PersonKind,
  updatePerson,
} from './repo.ts';

const TEXT_FIELDS = [
  'title',
  'firstName',
  'lastName',
  'titleHebrew',
  'firstNameHebrew',
  'lastNameHebrew',
  'suffixHebrew',
] as const;
const LIST_FIELDS = ['phones', 'emails', 'addresses'] as const;

const EMPTY: PersonFields = {
  title: null,
  firstName: null,
  lastName: null,
  titleHebrew: null,
  firstNameHebrew: null,
  lastNameHebrew: null,
  suffixHebrew: null,
  phones: [],
  emails: [],
  addresses: [],
};

/** Apply a patch to stored fields with the rules of 4.3. */
export function mergePerson(kind: PersonKind, stored: PersonFields, patch: PersonPatch): PersonFields {
  const out: PersonFields = { ...stored };
  const nullDeletes = kind === 'collector';
  for (const f of TEXT_FIELDS) {
    const v = patch[f];
    if (v === undefined || (v === null && !nullDeletes)) continue;
    out[f] = v === null || v.trim() === '' ? null : v.trim();
  }
  for (const f of LIST_FIELDS) {
    const v = patch[f];
    if (v === undefined || (v === null && !nullDeletes)) continue;
    (out as Record<string, unknown>)[f] = v ?? [];
  }
  return out;
}

function assertNamePair(f: PersonFields): void {
  const english = Boolean(f.firstName && f.lastName);
  const hebrew = Boolean(f.firstNameHebrew && f.lastNameHebrew);
  if (!english && !hebrew) {
    throw validationError([
      {
        field: 'firstName',
        message:
          'a complete name pair is required: firstName and lastName, or firstNameHebrew and lastNameHebrew',
      },
    ]);
  }
}

export function toRecord(kind: 'donor', orgGuid: string, p: Person): DonorRecord;
export function toRecord(kind: 'collector', orgGuid: string, p: Person): CollectorRecord;
export function toRecord(kind: PersonKind, orgGuid: string, p: Person): DonorRecord | CollectorRecord {
  const base = {
    orgGuid,
    title: p.title,
    firstName: p.firstName,
    lastName: p.lastName,
    titleHebrew: p.titleHebrew,
    firstNameHebrew: p.firstNameHebrew,
    lastNameHebrew: p.lastNameHebrew,
    suffixHebrew: p.suffixHebrew,
  };
  return kind === 'donor'
    ? {
        ...base,
        donorId: p.accountNum,
        donorPhones: p.phones,
        donorEmails: p.emails,
        donorAddresses: p.addresses,
      }
    : {
        ...base,
        collectorId: p.accountNum,
        collectorPhones: p.phones,
        collectorEmails: p.emails,
        collectorAddresses: p.addresses,
      };
}

async function savePerson(deps: Deps, caller: Caller, kind: PersonKind, patch: PersonPatch): Promise<Person> {
  assertSameOrg(caller, patch.orgGuid);
  return deps.db.transaction((tx) => savePersonIn(tx, caller, kind, patch));
}

async function savePersonIn(tx: Sql, caller: Caller, kind: PersonKind, patch: PersonPatch): Promise<Person> {
  const orgId = caller.org.id;
  const idPattern = new RegExp(`^${ACCOUNT_PREFIX[kind]}\\d{1,15}$`, 'i');
  {
    if (patch.id === '') {
      const fields = mergePerson(kind, EMPTY, patch);
      assertNamePair(fields);
      return insertPerson(tx, kind, orgId, null, fields);
    }
    const existing = await lockPerson(tx, kind, orgId, patch.id);
    if (existing) {
      const fields = mergePerson(kind, existing, patch);
      assertNamePair(fields);
      return updatePerson(tx, kind, existing.id, fields);
    }
    const idField = kind === 'donor' ? 'donorID' : 'collectorID';
    if (kind === 'collector') throw notFound(`Collector ${patch.id}`);
    if (!idPattern.test(patch.id)) {
      throw new ApiError(
        400,
        ERROR_CODES.VALIDATION_FAILED,
        `${patch.id} is not a valid donor account number`,
        [
          {
            field: idField,
            message: `must be empty (create) or an account number like ${ACCOUNT_PREFIX[kind]}100001`,
          },
        ],
      );
    }
    const fields = mergePerson(kind, EMPTY, patch);
    assertNamePair(fields);
    return insertPerson(tx, kind, orgId, patch.id.toUpperCase(), fields);
  }
}

export async function saveDonor(deps: Deps, caller: Caller, patch: PersonPatch): Promise<DonorRecord> {
  return toRecord('donor', caller.org.guid, await savePerson(deps, caller, 'donor', patch));
}

/**
 * SaveDonor under an idempotency key (device sync: a donor queued offline and sent again after a
 * lost answer must not be created twice).
 */
export async function saveDonorOnce(
  deps: Deps,
  caller: Caller,
  patch: PersonPatch,
  key: string,
  requestHash: string,
): Promise<DonorRecord> {
  assertSameOrg(caller, patch.orgGuid);
  return deps.db.transaction((tx) =>
    underIdempotencyKey(tx, caller.org.id, key, 'SaveDonor', requestHash, async () =>
      toRecord('donor', caller.org.guid, await savePersonIn(tx, caller, 'donor', patch)),
    ),
  );
}

export async function saveCollector(
  deps: Deps,
  caller: Caller,
  patch: PersonPatch,
): Promise<CollectorRecord> {
  return toRecord('collector', caller.org.guid, await savePerson(deps, caller, 'collector', patch));
}
