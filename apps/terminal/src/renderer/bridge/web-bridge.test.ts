// @vitest-environment happy-dom
// @vitest-environment-options {"settings":{"enableIframePageLoading":true}}
import type { ReceiptPrint } from '@kupah/contracts';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { version } from '../../../package.json';
import { createWebBridge } from './web-bridge.ts';

const receipt: ReceiptPrint = {
  title: 'קבלה',
  lines: ['<b>not bold</b>', '', 'תודה'],
  direction: 'rtl',
};

type Success = (position: { coords: { latitude: number; longitude: number } }) => void;
type Failure = (error: { code: number }) => void;

function fakeGeolocation(answer: (ok: Success, fail: Failure) => void): Navigator {
  return {
    geolocation: { getCurrentPosition: vi.fn((ok: Success, fail: Failure) => answer(ok, fail)) },
  } as unknown as Navigator;
}

/** happy-dom has no print(): give the frame one that records what it would print. */
function capturePrints() {
  const printed: Array<{ dir: string; title: string; lines: string[]; html: string }> = [];
  const append = document.body.append.bind(document.body);
  vi.spyOn(document.body, 'append').mockImplementation((...nodes) => {
    append(...nodes);
    for (const node of nodes) {
      if (!(node instanceof HTMLIFrameElement) || !node.contentWindow) continue;
      const frameWindow = node.contentWindow as Window;
      frameWindow.print = () => {
        const doc = node.contentDocument!;
        printed.push({
          dir: doc.documentElement.dir,
          title: doc.querySelector('h1')!.textContent ?? '',
          lines: [...doc.querySelectorAll('p')].map((p) => p.textContent ?? ''),
          html: doc.body.innerHTML,
        });
      };
    }
  });
  return printed;
}

describe('web bridge', () => {
  afterEach(() => {
    vi.restoreAllMocks();
    vi.useRealTimers();
    document.body.replaceChildren();
  });

  it('is the web platform: no host name, no OS secrets, the time zone from Intl', async () => {
    const bridge = createWebBridge();
    expect(bridge.platform).toBe('web');
    expect(await bridge.appVersion()).toBe(version);
    expect(await bridge.hostName()).toBeNull();
    expect(bridge.secrets).toBeNull();
    expect(bridge.timeZone()).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone);
  });

  it('answers the position the browser gives', async () => {
    const nav = fakeGeolocation((ok) => ok({ coords: { latitude: 31.778, longitude: 35.235 } }));
    expect(await createWebBridge({ navigator: nav }).location()).toEqual({
      locationName: null,
      latitude: 31.778,
      longitude: 35.235,
    });
  });

  it('answers null when refused, absent, broken or nonsensical', async () => {
    expect(
      await createWebBridge({ navigator: fakeGeolocation((_, fail) => fail({ code: 1 })) }).location(),
    ).toBeNull();
    expect(await createWebBridge({ navigator: {} as Navigator }).location()).toBeNull();
    const throwing = fakeGeolocation(() => {
      throw new Error('insecure context');
    });
    expect(await createWebBridge({ navigator: throwing }).location()).toBeNull();
    const wild = fakeGeolocation((ok) => ok({ coords: { latitude: 123, longitude: 0 } }));
    expect(await createWebBridge({ navigator: wild }).location()).toBeNull();
  });

  it('answers null when no answer comes in time (a permission prompt nobody answers)', async () => {
    vi.useFakeTimers();
    const pending = createWebBridge({
      navigator: fakeGeolocation(() => {}),
      locationTimeoutMs: 5_000,
    }).location();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(await pending).toBeNull();
  });

  it('prints the receipt from a hidden frame, as text, in its direction, and removes the frame', async () => {
    const printed = capturePrints();
    const bridge = createWebBridge();
    expect(await bridge.printReceipt(receipt)).toEqual({ printed: true });
    expect(printed).toEqual([
      expect.objectContaining({ dir: 'rtl', title: 'קבלה', lines: ['<b>not bold</b>', '', 'תודה'] }),
    ]);
    expect(printed[0]!.html).not.toContain('<b>');
    const frame = document.querySelector('iframe');
    expect(frame).not.toBeNull();
    expect(frame!.style.width).toBe('0px');
    frame!.contentWindow!.dispatchEvent(new Event('afterprint'));
    expect(document.querySelector('iframe')).toBeNull();
  });

  it('prints no bidi override or isolate control, so a donor name cannot reorder its line', async () => {
    const printed = capturePrints();
    const spoof: ReceiptPrint = {
      title: 'Beth \u202BIsrael',
      lines: ['Donor: Dvora \u202E0001', '\u2067x\u2069 כהן\u200F'],
      direction: 'ltr',
    };
    expect(await createWebBridge().printReceipt(spoof)).toEqual({ printed: true });
    expect(printed[0]).toMatchObject({
      title: 'Beth Israel',
      lines: ['Donor: Dvora 0001', 'x כהן\u200F'],
    });
  });

  it('removes a frame the browser never reports back on', async () => {
    capturePrints();
    vi.useFakeTimers();
    await createWebBridge({ printFrameTtlMs: 1_000 }).printReceipt(receipt);
    expect(document.querySelectorAll('iframe')).toHaveLength(1);
    vi.advanceTimersByTime(1_000);
    expect(document.querySelectorAll('iframe')).toHaveLength(0);
  });

  it('reports not printed when the frame cannot print, and leaves nothing behind', async () => {
    // Without capturePrints(), happy-dom's frame has no print(): the call throws.
    expect(await createWebBridge().printReceipt(receipt)).toEqual({ printed: false });
    expect(document.querySelectorAll('iframe')).toHaveLength(0);
  });

  it('kiosk mode is full screen, and refusals are ignored', async () => {
    const state: { fullscreenElement: Element | null } = { fullscreenElement: null };
    Object.defineProperty(document, 'fullscreenElement', {
      configurable: true,
      get: () => state.fullscreenElement,
    });
    const request = vi.fn(async () => {
      state.fullscreenElement = document.documentElement;
    });
    const exit = vi.fn(async () => {
      state.fullscreenElement = null;
    });
    Object.assign(document.documentElement, { requestFullscreen: request });
    Object.assign(document, { exitFullscreen: exit });
    const bridge = createWebBridge();
    await bridge.setKiosk(true);
    await bridge.setKiosk(true);
    expect(request).toHaveBeenCalledTimes(1);
    await bridge.setKiosk(false);
    await bridge.setKiosk(false);
    expect(exit).toHaveBeenCalledTimes(1);
    request.mockRejectedValueOnce(new TypeError('Permissions check failed'));
    await expect(bridge.setKiosk(true)).resolves.toBeUndefined();
    Object.assign(document.documentElement, { requestFullscreen: undefined });
    await expect(bridge.setKiosk(true)).resolves.toBeUndefined();
  });
});
