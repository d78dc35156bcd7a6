/**
 * The bridge in a plain browser (the web build at /terminal/): the same `TerminalBridge` the
 * Electron preload exposes, made of browser APIs. What a browser cannot offer answers "unknown"
 * (null) rather than failing: no host name, no OS secret store (the data layer then keeps the
 * credential under a non-extractable WebCrypto key), and full screen instead of a kiosk window.
 */
import {
  type BridgeLocation,
  bridgeLocation,
  type ReceiptPrint,
  type TerminalBridge,
} from '@kupah/contracts';
import { version } from '../../../package.json';
import { writeReceipt } from './receipt-document.ts';

export interface WebBridgeEnv {
  document: Document;
  navigator: Navigator;
  /** The longest a position may take, permission prompt included. */
  locationTimeoutMs: number;
  /** How long the print frame stays if the browser never says printing ended. */
  printFrameTtlMs: number;
}

/** Long enough for a cashier to answer the permission prompt; the data layer does not wait this long. */
const LOCATION_TIMEOUT_MS = 10_000;
const PRINT_FRAME_TTL_MS = 60_000;

/**
 * The position, or null when the browser has no geolocation, the user refuses, or no answer
 * comes in time. The outer timer matters: the Geolocation API's own `timeout` does not start
 * until the permission prompt is answered, and a prompt nobody answers would wait forever.
 */
function currentLocation(
  geolocation: Geolocation | undefined,
  timeoutMs: number,
): Promise<BridgeLocation | null> {
  if (!geolocation) return Promise.resolve(null);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), timeoutMs);
    const settle = (location: BridgeLocation | null) => {
      clearTimeout(timer);
      resolve(location);
    };
    try {
      geolocation.getCurrentPosition(
        ({ coords }) => {
          const parsed = bridgeLocation.safeParse({
            locationName: null,
            latitude: coords.latitude,
            longitude: coords.longitude,
          });
          settle(parsed.success ? parsed.data : null);
        },
        () => settle(null),
        { enableHighAccuracy: false, timeout: timeoutMs, maximumAge: 10 * 60_000 },
      );
    } catch {
      settle(null);
    }
  });
}

/**
 * Prints the receipt from a hidden frame, so the page itself is not what prints. The browser
 * shows its print dialog; whether the cashier then printed or cancelled is not reported to
 * pages, so a dialog that opened counts as printed.
 */
function printInFrame(doc: Document, receipt: ReceiptPrint, ttlMs: number): { printed: boolean } {
  const frame = doc.createElement('iframe');
  frame.setAttribute('aria-hidden', 'true');
  frame.tabIndex = -1;
  for (const [name, value] of Object.entries({
    position: 'fixed',
    right: '0',
    bottom: '0',
    width: '0',
    height: '0',
    border: '0',
  }))
    frame.style.setProperty(name, value);
  doc.body.append(frame);
  const view = frame.contentWindow;
  const frameDoc = frame.contentDocument;
  if (!view || !frameDoc) {
    frame.remove();
    return { printed: false };
  }
  // Firefox returns from print() before the dialog closes: remove the frame once printing ends.
  const timer = setTimeout(() => frame.remove(), ttlMs);
  view.addEventListener('afterprint', () => {
    clearTimeout(timer);
    frame.remove();
  });
  try {
    writeReceipt(frameDoc, receipt);
    view.focus();
    view.print();
    return { printed: true };
  } catch {
    clearTimeout(timer);
    frame.remove();
    return { printed: false };
  }
}

async function setFullScreen(doc: Document, on: boolean): Promise<void> {
  try {
    if (on && !doc.fullscreenElement) await doc.documentElement.requestFullscreen();
    else if (!on && doc.fullscreenElement) await doc.exitFullscreen();
  } catch {
    // Refused (no user gesture, or a browser without the API): the page stays as it is.
  }
}

export function createWebBridge(env: Partial<WebBridgeEnv> = {}): TerminalBridge {
  const { document: doc = globalThis.document, navigator: nav = globalThis.navigator } = env;
  const locationTimeoutMs = env.locationTimeoutMs ?? LOCATION_TIMEOUT_MS;
  const printFrameTtlMs = env.printFrameTtlMs ?? PRINT_FRAME_TTL_MS;
  return {
    platform: 'web',
    appVersion: async () => version,
    hostName: async () => null,
    timeZone: () => Intl.DateTimeFormat().resolvedOptions().timeZone,
    location: () => currentLocation(nav?.geolocation, locationTimeoutMs),
    printReceipt: async (receipt) => printInFrame(doc, receipt, printFrameTtlMs),
    secrets: null,
    setKiosk: (on) => setFullScreen(doc, on),
  };
}
