/**
 * The `deviceInfo` a request carries (shown in the payment webhook): which device took the
 * donation, in which time zone, when, and where. What the cashier set on this device wins; then
 * what the machine reports through the bridge; then what the server calls the device.
 *
 * The bridge is asked once per data instance and the answers are kept: asking for a position can
 * take seconds (or a permission prompt) and must not slow down every donation.
 */
import type { BridgeLocation, DeviceSettings, TerminalBridge } from '@kupah/contracts';
import type { LocalSettings } from './terminal-data.ts';

export interface DeviceInfo {
  deviceName: string | null;
  timezone: string | null;
  deviceCreatedDate: string;
  location: { locationName: string | null; latitude: number | null; longitude: number | null } | null;
}

/** How long a first position request may hold up a donation. */
const LOCATION_WAIT_MS = 1_500;

export interface DeviceFacts {
  hostName(): Promise<string | null>;
  location(): Promise<BridgeLocation | null>;
}

/** The bridge's answers, asked once (failures and slow answers count as "unknown"). */
export function cachedDeviceFacts(bridge: TerminalBridge): DeviceFacts {
  let hostName: Promise<string | null> | null = null;
  let location: Promise<BridgeLocation | null> | null = null;
  return {
    hostName() {
      hostName ??= bridge.hostName().catch(() => null);
      return hostName;
    },
    location() {
      if (!location) {
        const asked = bridge.location().catch(() => null);
        let timer: ReturnType<typeof setTimeout> | undefined;
        const late = new Promise<null>((resolve) => {
          timer = setTimeout(() => resolve(null), LOCATION_WAIT_MS);
        });
        location = Promise.race([asked, late]).finally(() => clearTimeout(timer));
        // A late answer is still used by the next donation.
        void asked.then((l) => {
          if (l) location = Promise.resolve(l);
        });
      }
      return location;
    },
  };
}

const blank = (s: string | null | undefined): boolean => s == null || s.trim() === '';

/** The device's name: the local setting, else the machine's host name, else the server's name for it. */
export async function deviceNameOf(
  local: LocalSettings,
  facts: DeviceFacts,
  settings: DeviceSettings,
): Promise<string> {
  if (!blank(local.deviceName)) return local.deviceName!.trim();
  const host = await facts.hostName();
  if (!blank(host)) return host!.trim();
  return settings.deviceName;
}

export async function deviceInfoOf(
  local: LocalSettings,
  facts: DeviceFacts,
  bridge: TerminalBridge,
  settings: DeviceSettings,
  createdAt: string,
): Promise<DeviceInfo> {
  const l = local.location;
  const localSet = !blank(l.locationName) || l.latitude !== null || l.longitude !== null;
  const location = localSet ? l : await facts.location();
  let timezone: string | null = null;
  try {
    timezone = bridge.timeZone() || null;
  } catch {
    timezone = null;
  }
  return {
    deviceName: await deviceNameOf(local, facts, settings),
    timezone: timezone ?? settings.timezone,
    deviceCreatedDate: createdAt,
    location: location
      ? { locationName: location.locationName, latitude: location.latitude, longitude: location.longitude }
      : null,
  };
}

/**
 * The letters of a local reference: the initials of the device name's words (up to 3), or the
 * first two letters of a one-word name, upper case ("Hall kiosk" → "HK", "Lobby" → "LO").
 */
export function localRefPrefix(deviceName: string): string {
  const words = deviceName.match(/[\p{L}\p{N}]+/gu) ?? [];
  let prefix: string;
  if (words.length === 0) prefix = 'KP';
  else if (words.length === 1) prefix = Array.from(words[0]!).slice(0, 2).join('');
  else
    prefix = words
      .slice(0, 3)
      .map((w) => Array.from(w)[0] ?? '')
      .join('');
  return prefix.toUpperCase();
}

export const formatLocalRef = (prefix: string, seq: number): string =>
  `${prefix}-${String(seq).padStart(4, '0')}`;
