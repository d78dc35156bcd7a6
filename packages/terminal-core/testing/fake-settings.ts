/** Organisation settings and credentials of the in-test fake server (no crypto: pure tests import these). */
import type { DeviceSettings } from '@kupah/contracts';

export const TEST_ORG_GUID = '3f2b8c1e-5d4a-4c7e-9b1f-2a6d8e0c4b71';
export const TEST_CREDENTIAL = '9a1c7e52-44b0-4d7e-8f3a-0c5e2b7d9f14';

export const testSettings = (over: Partial<DeviceSettings> = {}): DeviceSettings => ({
  orgGuid: TEST_ORG_GUID,
  orgName: 'Test Shul',
  currencies: ['USD', 'ILS'],
  scheduleMode: 'Integration',
  timezone: 'America/New_York',
  il: false,
  sandbox: true,
  deviceName: 'Hall kiosk',
  offline: { perPaymentMinor: 50_000, totalMinor: 100_000, expiryHours: 72 },
  presetsMinor: [1800, 3600],
  coverFeePercent: 3,
  ...over,
});
