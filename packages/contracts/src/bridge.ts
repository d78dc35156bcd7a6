/**
 * The terminal's bridge: the one API object the Electron preload exposes to the renderer (and
 * that the web build implements with browser APIs). Messages the main process receives are
 * parsed with these schemas.
 */
import { z } from 'zod';

export const bridgeLocation = z.object({
  locationName: z.string().max(256).nullable(),
  latitude: z.number().min(-90).max(90).nullable(),
  longitude: z.number().min(-180).max(180).nullable(),
});
export type BridgeLocation = z.infer<typeof bridgeLocation>;

/** A receipt as printed: already formatted text lines (never a full card number). */
export const receiptPrint = z.object({
  title: z.string().max(256),
  lines: z.array(z.string().max(256)).max(80),
  direction: z.enum(['ltr', 'rtl']),
});
export type ReceiptPrint = z.infer<typeof receiptPrint>;

export interface TerminalBridge {
  readonly platform: 'electron' | 'web';
  appVersion(): Promise<string>;
  /** The host name (Electron) unless the cashier set a name; the web build returns null. */
  hostName(): Promise<string | null>;
  timeZone(): string;
  /** Position if the platform offers one and the user allowed it, else null. */
  location(): Promise<BridgeLocation | null>;
  printReceipt(receipt: ReceiptPrint): Promise<{ printed: boolean }>;
  /** OS-level secret protection (Electron safeStorage); null where unavailable. */
  readonly secrets: {
    protect(plain: string): Promise<string>;
    reveal(protectedText: string): Promise<string>;
  } | null;
  setKiosk(on: boolean): Promise<void>;
}

/**
 * The IPC channel of each bridge call. One table, imported by the preload (which sends) and by
 * the main process (which answers), so a renamed call cannot leave one side talking to nobody.
 */
export const BRIDGE_CHANNELS = {
  appVersion: 'kupah:app-version',
  hostName: 'kupah:host-name',
  location: 'kupah:location',
  printReceipt: 'kupah:print-receipt',
  protectSecret: 'kupah:secrets-protect',
  revealSecret: 'kupah:secrets-reveal',
  setKiosk: 'kupah:set-kiosk',
} as const;
export type BridgeCall = keyof typeof BRIDGE_CHANNELS;

/**
 * The command-line switch the main process gives the renderer (webPreferences.additionalArguments)
 * when the operating system can protect secrets. The sandboxed preload cannot ask safeStorage
 * itself and must decide `secrets` (object or null) synchronously, before the page runs.
 */
export const BRIDGE_OS_SECRETS_ARG = '--kupah-os-secrets';

/** A secret handed to the OS to protect: the device credential, a few dozen characters. */
export const secretPlain = z.string().max(4_096);
/** What `secrets.protect` returned: the OS ciphertext, base64. */
export const protectedSecret = z.base64().min(1).max(16_384);

/**
 * The arguments of each call as they cross IPC (a tuple: `invoke(channel, ...args)`). The main
 * process parses every message with these before it acts on it; extra or missing arguments are
 * refused like wrong ones.
 */
export const bridgeRequests = {
  appVersion: z.tuple([]),
  hostName: z.tuple([]),
  location: z.tuple([]),
  printReceipt: z.tuple([receiptPrint]),
  protectSecret: z.tuple([secretPlain]),
  revealSecret: z.tuple([protectedSecret]),
  setKiosk: z.tuple([z.boolean()]),
} as const satisfies Record<BridgeCall, z.ZodTuple>;
export type BridgeRequest<K extends BridgeCall> = z.output<(typeof bridgeRequests)[K]>;

type Secrets = NonNullable<TerminalBridge['secrets']>;

/** What each call answers, as the renderer sees it through `TerminalBridge`. */
export interface BridgeReplies {
  appVersion: Awaited<ReturnType<TerminalBridge['appVersion']>>;
  hostName: Awaited<ReturnType<TerminalBridge['hostName']>>;
  location: Awaited<ReturnType<TerminalBridge['location']>>;
  printReceipt: Awaited<ReturnType<TerminalBridge['printReceipt']>>;
  protectSecret: Awaited<ReturnType<Secrets['protect']>>;
  revealSecret: Awaited<ReturnType<Secrets['reveal']>>;
  setKiosk: Awaited<ReturnType<TerminalBridge['setKiosk']>>;
}
