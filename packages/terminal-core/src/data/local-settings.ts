/**
 * Settings the cashier or manager sets on this device (not the organisation's, which come from
 * the server). Stored in the key-value table; what was never set reads as the default.
 */
import { z } from 'zod';
import { PIN_RECORD_PATTERN } from './manager-pin.ts';
import type { LocalSettings } from './terminal-data.ts';
import { readKv, type TerminalDatabase } from './terminal-database.ts';

export const DEFAULT_LOCAL_SETTINGS: LocalSettings = {
  deviceName: null,
  location: { locationName: null, latitude: null, longitude: null },
  language: 'en',
  mode: 'cashier',
  collectorAccountNum: null,
  managerPinHash: null,
  kioskIdleSeconds: 60,
};

const localSettingsPatch = z
  .object({
    deviceName: z.string().max(256).nullable(),
    location: z.object({
      locationName: z.string().max(256).nullable(),
      latitude: z.number().min(-90).max(90).nullable(),
      longitude: z.number().min(-180).max(180).nullable(),
    }),
    language: z.enum(['en', 'he']),
    mode: z.enum(['cashier', 'kiosk', 'collector']),
    collectorAccountNum: z.string().max(64).nullable(),
    managerPinHash: z
      .string()
      .regex(PIN_RECORD_PATTERN, 'must be a PBKDF2 record (or a SHA-256 hex digest of an older version)')
      .nullable(),
    kioskIdleSeconds: z.number().int().min(10).max(3600),
    /** Wrong manager PIN tries and lockouts (see `components/manager-pin.ts`). */
    pinLock: z
      .object({
        failures: z.number().int().min(0).max(1000),
        lockouts: z.number().int().min(0).max(1000),
        lockedUntil: z.iso.datetime().nullable(),
      })
      .nullable(),
  })
  .partial();

export class LocalSettingsInvalid extends Error {
  constructor(readonly fields: { field: string; message: string }[]) {
    super(`Settings not saved: ${fields.map((f) => `${f.field} ${f.message}`).join('; ')}`);
    this.name = 'LocalSettingsInvalid';
  }
}

/** The stored settings over the defaults (a setting added in a later version reads as its default). */
export const withDefaults = (stored: Partial<LocalSettings> | undefined): LocalSettings => ({
  ...DEFAULT_LOCAL_SETTINGS,
  ...stored,
  location: { ...DEFAULT_LOCAL_SETTINGS.location, ...stored?.location },
});

export function mergeLocalSettings(current: LocalSettings, patch: Partial<LocalSettings>): LocalSettings {
  const parsed = localSettingsPatch.safeParse(patch);
  if (!parsed.success) {
    throw new LocalSettingsInvalid(
      parsed.error.issues.map((i) => ({
        field: i.path.map(String).join('.') || '(settings)',
        message: i.message,
      })),
    );
  }
  const merged = withDefaults({ ...current, ...parsed.data });
  // Donors use a kiosk on their own: without a manager PIN, anyone could open its settings.
  if (merged.mode === 'kiosk' && !merged.managerPinHash && ('mode' in patch || 'managerPinHash' in patch)) {
    throw new LocalSettingsInvalid([
      { field: 'mode', message: 'kiosk mode needs a manager PIN: set one first' },
    ]);
  }
  return merged;
}

/** This device's settings as stored, with the defaults for what was never set. */
export async function readLocalSettings(db: TerminalDatabase): Promise<LocalSettings> {
  return withDefaults(await readKv(db, 'localSettings'));
}
