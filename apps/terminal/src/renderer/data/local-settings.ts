/**
 * Settings the cashier or manager sets on this device (not the organisation's, which come from
 * the server). Stored in the key-value table; what was never set reads as the default.
 */
import { z } from 'zod';
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
      .regex(/^[0-9a-f]{64}$/, 'must be a SHA-256 hex digest')
      .nullable(),
    kioskIdleSeconds: z.number().int().min(10).max(3600),
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
  return withDefaults({ ...current, ...parsed.data });
}

/** SHA-256 (hex) of a manager PIN, as `LocalSettings.managerPinHash` holds it. */
export async function hashManagerPin(pin: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(pin));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** This device's settings as stored, with the defaults for what was never set. */
export async function readLocalSettings(db: TerminalDatabase): Promise<LocalSettings> {
  return withDefaults(await readKv(db, 'localSettings'));
}
