/**
 * A payment method's name as donors know it: the organisation's names of its charity-card
 * providers (settings.providerNames: "Donors' Fund" for Provider_1), else the generic one.
 */
import type { DeviceSettings } from '@kupah/contracts';

export function methodName(
  t: (key: string) => string,
  method: string,
  settings: Pick<DeviceSettings, 'providerNames'> | null | undefined,
): string {
  return settings?.providerNames?.[method]?.trim() || t(`method.${method}`);
}
