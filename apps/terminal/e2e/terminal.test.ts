/**
 * The terminal end to end: its web build in Debian's Chromium (playwright-core), served by a
 * static server of its own (as a dev server or any web host would), talking to a real server
 * process that the tests stop and start. Webhooks arrive at a loopback receiver that verifies
 * every signature.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  chromiumAvailable,
  type LaunchedChromium,
  launchChromium,
  requireChromium,
} from '@kupah/browser-testing';
import { paymentWebhook } from '@kupah/contracts';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../../server/src/testing/receiver.ts';
import {
  adminClient,
  adminPortFor,
  restartablePort,
  type ServerProcess,
  startServerProcess,
} from '../../server/src/testing/server-process.ts';

const ADMIN = 'terminal-e2e-admin-token-0123456789';
// The test build (e2e/build-renderer.ts): the only one with the `window.__kupah` hook.
const DIST = fileURLToPath(new URL('../dist/renderer-e2e/', import.meta.url));
export const ARTIFACTS = fileURLToPath(new URL('./artifacts/', import.meta.url));
const TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.webmanifest': 'application/manifest+json',
};

function serveStatic(dir: string, port = 0): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent((req.url ?? '/').split('?')[0]!)).replace(/^(\.\.[/\\])+/, '');
    const file = join(dir, path === '/' ? 'index.html' : path);
    let body: Buffer;
    try {
      body = readFileSync(file);
    } catch {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body);
  });
  return new Promise((r) =>
    server.listen(port, '127.0.0.1', () =>
      r({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server }),
    ),
  );
}

interface Org {
  orgGuid: string;
  apiKey: string;
}

describe.skipIf(!chromiumAvailable() && !process.env.CI)('the terminal in Chromium', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kupah-terminal-e2e-'));
  let port = 0;
  const env = {
    ADMIN_TOKEN: ADMIN,
    LOG_LEVEL: 'silent',
    WEBHOOK_ALLOW_PRIVATE: '1',
    WEBHOOK_LEASE_MS: '1500',
    SCHEDULER: '0',
    DATA_DIR: join(dir, 'data'),
    DATABASE_URL: '',
  };
  const started: ServerProcess[] = [];
  let server: ServerProcess | null = null;
  let web: { url: string; server: Server };
  let receiver: Receiver;
  let chromium: LaunchedChromium;
  let page: Page;
  let org: Org;

  const startBackend = async () => {
    server = await startServerProcess(port, env);
    started.push(server);
  };
  const admin = adminClient(() => `http://127.0.0.1:${adminPortFor(port)}`, ADMIN);
  const api = async (path: string, body: unknown) =>
    fetch(`http://127.0.0.1:${port}${path}`, {
      method: 'PUT',
      headers: { apikey: org.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    requireChromium();
    port = await restartablePort();
    mkdirSync(ARTIFACTS, { recursive: true });
    web = await serveStatic(DIST);
    receiver = await startReceiver();
    await startBackend();
    org = await admin<Org>('POST', '/orgs', { name: 'Beth Israel', currencies: ['USD', 'ILS'] });
    const settings = await admin<{ webhookSecrets: { payment: { secret: string } } }>(
      'PATCH',
      `/orgs/${org.orgGuid}/settings`,
      {
        paymentWebhook: `${receiver.url}/payment`,
        terminal: { presetsMinor: [1800, 3600, 10_000], coverFeePercent: 3 },
      },
    );
    receiver.secrets.push(settings.webhookSecrets.payment.secret);
    await api('/V1/External/SaveCampaign', {
      orgGuid: org.orgGuid,
      campaignNumber: 0,
      campaignName: 'Building Fund',
    });
    await api('/V1/External/SaveReason', { orgGuid: org.orgGuid, reasonNumber: 0, reasonName: 'Kiddush' });
    await api('/V1/External/SaveDonor', {
      orgGuid: org.orgGuid,
      donorID: '',
      firstName: 'Rivka',
      lastName: 'Stern',
      firstNameHebrew: 'רבקה',
      lastNameHebrew: 'שטרן',
      donorPhones: [{ phoneNumber: '3055550123' }],
    });
    chromium = await launchChromium();
    page = await chromium.browser.newPage();
  }, 120_000);

  afterAll(async () => {
    await chromium?.close();
    await Promise.all(started.map((s) => s.kill('SIGKILL')));
    await receiver?.close();
    await new Promise<void>((r) => (web ? web.server.close(() => r()) : r()));
    rmSync(dir, { recursive: true, force: true });
  });

  const byTest = (id: string) => page.getByTestId(id);

  async function donate(
    card: string,
    opts: { amount?: string; donor?: 'search' | 'anonymous'; refused?: boolean } = {},
  ) {
    await byTest('nav-donate').click();
    await byTest('amount-screen').waitFor();
    for (const k of opts.amount ?? '18') await byTest(`key-${k}`).click();
    await byTest('amount-next').click();
    await byTest('card-number').fill(card);
    await byTest('card-expiry').fill('12/30');
    await byTest('card-cvv').fill('123');
    await byTest('method-next').click();
    if (opts.donor === 'search') {
      await byTest('donor-search').fill('שטרן');
      await page.getByRole('button', { name: /רבקה שטרן|Rivka Stern/ }).click();
    } else {
      await byTest('donor-anonymous').click();
    }
    await byTest('donor-next').click();
    await byTest('details-next').click();
    await byTest('confirm').click();
    await byTest(opts.refused ? 'refusal' : 'result-screen').waitFor();
  }

  it('pairs, and takes a card donation online with its receipt number and a webhook with the device facts', async () => {
    const device = await admin<{ pairingCode: string }>('POST', `/orgs/${org.orgGuid}/devices`, {
      name: 'Lobby kiosk',
      sandbox: true,
    });
    await page.goto(web.url);
    await byTest('pairing-screen').waitFor();
    await byTest('pair-url').fill(`http://127.0.0.1:${port}`);
    await byTest('pair-code').fill('nope');
    await expect
      .poll(async () => (await byTest('pair-code-error').textContent()) ?? '')
      .toContain('8-character');
    await byTest('pair-code').fill(device.pairingCode);
    await byTest('pair-submit').click();
    await byTest('amount-screen').waitFor();

    // Where the device stands: shown on every payment webhook.
    await byTest('nav-settings').click();
    await byTest('settings-location').fill('Main hall');
    await byTest('settings-save').click();
    await byTest('settings-note').waitFor();

    // A bad card number is refused as it is typed.
    await byTest('nav-donate').click();
    await byTest('key-1').click();
    await byTest('amount-next').click();
    await byTest('card-number').fill('4242424242424241');
    await expect
      .poll(async () => (await byTest('card-number-error').textContent()) ?? '')
      .toMatch(/not valid/);

    await donate('4242424242424242', { donor: 'search' });
    const approved = await byTest('result-approved').textContent();
    const receipt = /R\d+/.exec(approved ?? '')?.[0];
    expect(receipt).toBeDefined();

    const hook = await waitFor(() =>
      receiver.received.find((r) => r.verified && JSON.parse(r.body).paymentNumber === receipt),
    );
    const body = paymentWebhook.parse(JSON.parse(hook.body));
    expect(body.deviceName).toBe('Lobby kiosk');
    expect(body.timezone).toBeTruthy();
    expect(body.deviceCreatedDate).toBeTruthy();
    expect(body.locationInfo).toMatchObject({ locationName: 'Main hall' });
    expect(body.last4Digits).toBe('4242');
    // The card number is nowhere in the page's storage.
    const stored = await page.evaluate(async () => {
      const g = globalThis as unknown as { __kupah: { data: { listOutbox(): Promise<unknown[]> } } };
      return JSON.stringify(await g.__kupah.data.listOutbox());
    });
    expect(stored).not.toContain('4242424242424242');
  });

  it('takes donations while the backend is down, keeps them across a reload, and forwards them once it is back', async () => {
    await expect.poll(async () => (await byTest('queue-count').textContent()) ?? '').toMatch(/Nothing/);
    // The terminal must not notice the drop before the donation (its last sync was good): its
    // loop is held for that moment, else a timer run that happens to fall between the kill and
    // the donation would show it offline first and the amount step would refuse instead.
    await page.evaluate(() =>
      (globalThis as unknown as { __kupah: { data: { stop(): void } } }).__kupah.data.stop(),
    );
    await server!.kill('SIGTERM');
    // The status bar still says Online: the case that once let an over-limit donation through.
    expect(await byTest('online-state').getAttribute('data-online')).toBe('true');
    // A donation over the per-payment offline limit (1,000.00) needs the server now, cannot reach
    // it, and is refused, not queued.
    await donate('4242424242424242', { amount: '1500', refused: true });
    expect(await byTest('refusal').textContent()).toMatch(/1,000\.00/);
    await expect.poll(async () => (await byTest('queue-count').textContent()) ?? '').toMatch(/Nothing/);
    await page.evaluate(() =>
      (globalThis as unknown as { __kupah: { data: { start(): void } } }).__kupah.data.start(),
    );
    await donate('5555555555554444', { amount: '36' });
    await byTest('result-saved').waitFor({ timeout: 15_000 });
    await donate('4000000000000002', { amount: '54' }); // declined once it reaches the gateway
    await byTest('result-saved').waitFor({ timeout: 15_000 });
    await expect.poll(async () => (await byTest('queue-count').textContent()) ?? '').toMatch(/2 waiting/);

    // The service worker (Workbox) has precached the app by now: after this reload it serves it.
    expect(await page.evaluate('navigator.serviceWorker.ready.then((r) => Boolean(r.active))')).toBe(true);
    await page.reload();
    await byTest('amount-screen').waitFor();
    await expect.poll(async () => (await byTest('queue-count').textContent()) ?? '').toMatch(/2 waiting/);
    expect(await page.evaluate('Boolean(navigator.serviceWorker.controller)')).toBe(true);

    // A reboot with no network at all: whatever served the app is unreachable too. The terminal
    // opens from the service worker's cache, with its queue, and still takes a donation.
    const webPort = Number(new URL(web.url).port);
    web.server.closeAllConnections();
    await new Promise<void>((r) => web.server.close(() => r()));
    await page.reload();
    await byTest('amount-screen').waitFor();
    await expect.poll(async () => (await byTest('queue-count').textContent()) ?? '').toMatch(/2 waiting/);
    await donate('4242424242424242', { amount: '12' });
    await byTest('result-saved').waitFor({ timeout: 15_000 });
    await expect.poll(async () => (await byTest('queue-count').textContent()) ?? '').toMatch(/3 waiting/);
    web = await serveStatic(DIST, webPort);

    // The server comes back: the terminal probes every ~2 s while it cannot reach it, so the
    // queue starts moving within seconds, with nobody pressing anything.
    await startBackend();
    await page.waitForFunction(
      () =>
        (globalThis as unknown as { document: Document }).document
          .querySelector('[data-testid=queue-count]')
          ?.textContent?.includes('Nothing'),
      undefined,
      { timeout: 8_000 },
    );
    // The webhook of the donation taken while the backend was down: the device's facts, its time.
    const late = await waitFor(() =>
      receiver.received.find((r) => r.verified && JSON.parse(r.body).amount === '36.00'),
    );
    const lateBody = paymentWebhook.parse(JSON.parse(late.body));
    expect(lateBody).toMatchObject({
      deviceName: 'Lobby kiosk',
      locationInfo: { locationName: 'Main hall' },
    });
    expect(Date.parse(lateBody.deviceCreatedDate!)).toBeLessThan(Date.parse(lateBody.processedDateTime!));
    // The decline after forwarding is on the queue screen, where the cashier sees it.
    await byTest('nav-queue').click();
    await byTest('queue-tab-declined').click();
    const declined = byTest('queue-item');
    await declined.first().waitFor();
    expect(await declined.count()).toBe(1);
    expect(await declined.first().textContent()).toMatch(/54/);
    await byTest('queue-tab-done').click();
    await expect.poll(async () => byTest('queue-item').count()).toBeGreaterThanOrEqual(2);
  });

  it('tablet portrait and phone: the step buttons stay in sight; an error appearing moves nothing', async () => {
    for (const size of [
      { width: 768, height: 1024 },
      { width: 390, height: 844 },
    ]) {
      await page.setViewportSize(size);
      await byTest('nav-donate').click();
      await byTest('key-1').click();
      await byTest('amount-next').click();
      await byTest('method-screen').waitFor();
      const next = await byTest('method-next').boundingBox();
      expect(next, `${size.width}×${size.height}`).not.toBeNull();
      expect(next!.y + next!.height, `${size.width}×${size.height}`).toBeLessThanOrEqual(size.height);
      // A wrong card number, then its error: the fields below it stay where they were.
      // (Positions in the page, not the window: focusing a field may scroll.)
      const top = () =>
        page.evaluate(
          `(() => { const r = document.querySelector('[data-testid=card-expiry]').getBoundingClientRect(); return r.top + window.scrollY; })()`,
        );
      const before = await top();
      await byTest('card-number').fill('4242424242424241');
      await byTest('card-expiry').click();
      await byTest('card-number-error').waitFor();
      expect(await top()).toBe(before);
    }
    await page.setViewportSize({ width: 1280, height: 720 });
  });

  it('previews a Hebrew-calendar schedule with Hebrew dates, then creates it', async () => {
    await byTest('nav-donate').click();
    for (const k of '36') await byTest(`key-${k}`).click();
    await byTest('recurring').check();
    await byTest('amount-next').click();
    await byTest('card-number').fill('4242424242424242');
    await byTest('card-expiry').fill('12/30');
    await byTest('card-cvv').fill('123');
    await byTest('method-next').click();
    await byTest('donor-anonymous').click();
    await byTest('donor-next').click();
    await byTest('frequency').selectOption('Monthly_Hebrew');
    await byTest('schedule-count').fill('12');
    await byTest('schedule-preview').waitFor();
    const dates = await byTest('hebrew-date').allTextContents();
    expect(dates).toHaveLength(12);
    expect(dates[0]).toMatch(/57\d\d/);
    // Each Hebrew month once: the day of the Hebrew month stays (or moves to the day before Shabbat).
    expect(new Set(dates.map((d) => d.split(' ').slice(1).join(' '))).size).toBeGreaterThanOrEqual(11);
    await byTest('details-next').click();
    await byTest('confirm').click();
    await byTest('result-approved').waitFor({ timeout: 15_000 });
    expect(await byTest('result-approved').textContent()).toMatch(/Schedule \d+/);
  });

  it('lays out right to left in Hebrew', async () => {
    await page.setViewportSize({ width: 1100, height: 820 });
    await byTest('nav-donate').click();
    for (const k of '180') await byTest(`key-${k}`).click();
    await page.screenshot({ path: join(ARTIFACTS, 'terminal-en.png') });
    await byTest('nav-settings').click();
    await byTest('settings-language').selectOption('he');
    await byTest('settings-save').click();
    await page.waitForFunction(
      () => (globalThis as unknown as { document: Document }).document.documentElement.dir === 'rtl',
    );
    await byTest('nav-donate').click();
    for (const k of '180') await byTest(`key-${k}`).click();
    const html = await page.evaluate(() => {
      const d = (globalThis as unknown as { document: Document }).document;
      return {
        dir: d.documentElement.dir,
        lang: d.documentElement.lang,
        title: d.querySelector('h1')?.textContent,
      };
    });
    expect(html).toEqual({ dir: 'rtl', lang: 'he', title: 'סכום' });
    // The navigation starts at the right edge.
    const nav = await page.locator('nav').boundingBox();
    const first = await byTest('nav-donate').boundingBox();
    expect(first!.x + first!.width).toBeGreaterThan(nav!.x + nav!.width - 60);
    await page.screenshot({ path: join(ARTIFACTS, 'terminal-he.png') });
    await byTest('key-0').click(); // keep the amount for the next screenshot
    await byTest('nav-settings').click();
    await byTest('settings-language').selectOption('en');
    await byTest('settings-save').click();
    await page.waitForFunction(
      () => (globalThis as unknown as { document: Document }).document.documentElement.dir === 'ltr',
    );
  });

  it('a decline, then "Try another card": the amount, donor and campaign stay; the second card is approved', async () => {
    await byTest('nav-donate').click();
    await byTest('amount-screen').waitFor();
    for (const k of '54') await byTest(`key-${k}`).click();
    await byTest('amount-next').click();
    await byTest('card-number').fill('4000000000000002');
    await byTest('card-expiry').fill('12/30');
    await byTest('card-cvv').fill('123');
    await byTest('method-next').click();
    await byTest('donor-search').fill('שטרן');
    await page.getByRole('button', { name: /רבקה שטרן|Rivka Stern/ }).click();
    await byTest('donor-next').click();
    await byTest('campaign').selectOption({ label: 'Building Fund' });
    await byTest('details-next').click();
    await byTest('confirm').click();
    await byTest('result-declined').waitFor();
    await byTest('try-another-payment').click();
    // Back on the payment step with the card cleared and everything else kept.
    await byTest('method-screen').waitFor();
    expect(await byTest('card-number').inputValue()).toBe('');
    expect(await byTest('draft-amount').textContent()).toMatch(/54/);
    await byTest('card-number').fill('4111111111111111');
    await byTest('card-expiry').fill('12/30');
    await byTest('card-cvv').fill('123');
    await byTest('method-next').click();
    await byTest('donor-next').click();
    await byTest('details-next').click();
    await byTest('confirm').click();
    const approved = (await byTest('result-approved').textContent()) ?? '';
    const receipt = /R\d+/.exec(approved)?.[0];
    expect(receipt).toBeDefined();
    const hook = await waitFor(() =>
      receiver.received.find((r) => r.verified && JSON.parse(r.body).paymentNumber === receipt),
    );
    const body = paymentWebhook.parse(JSON.parse(hook.body));
    expect(Number(body.amount)).toBe(54);
    // The donor chosen before the decline (Rivka Stern, on file) and the campaign are still there.
    expect(body).toMatchObject({ last4Digits: '1111', isAnonymousDonation: false });
    expect(body.donorInfo.donorNumber).toBeTruthy();
    expect(body.campaignInfo.map((c) => c.campaignName)).toEqual(['Building Fund']);
  });

  it('voids a sent payment only with the manager PIN', async () => {
    await byTest('nav-queue').click();
    await byTest('queue-tab-done').click();
    await byTest('void').first().click();
    await byTest('act-reason').fill('entered twice');
    await byTest('act-pin').fill('1234');
    await byTest('act-confirm').click();
    await expect
      .poll(async () => (await byTest('queue-message').textContent()) ?? '')
      .toMatch(/PIN in Settings/);

    await byTest('nav-settings').click();
    await byTest('settings-pin').fill('1234');
    await byTest('settings-save').click();
    await byTest('settings-note').waitFor();
    await byTest('nav-queue').click();
    await byTest('queue-tab-done').click();
    await byTest('void').first().click();
    await byTest('act-reason').fill('entered twice');
    await byTest('act-pin').fill('9999');
    await byTest('act-confirm').click();
    await expect.poll(async () => (await byTest('queue-message').textContent()) ?? '').toMatch(/Wrong PIN/);
    await byTest('act-pin').fill('1234');
    await byTest('act-confirm').click();
    const voidState = () =>
      page.evaluate(async () => {
        const g = globalThis as unknown as {
          __kupah: {
            data: { listOutbox(): Promise<{ kind: string; state: string; receiptNum: string | null }[]> };
          };
        };
        const v = (await g.__kupah.data.listOutbox()).find((i) => i.kind === 'void');
        return v ? `${v.state} ${v.receiptNum}` : 'none';
      });
    await expect.poll(voidState, { timeout: 20_000 }).toMatch(/^done R\d+$/);
  });

  it('e-mails the receipt the donor asks for on the result screen: the server queues it for that payment', async () => {
    await admin('PATCH', `/orgs/${org.orgGuid}/settings`, {
      receipts: { legalName: 'Beth Israel Congregation', taxId: '12-3456789', address: '1 Main St' },
    });
    // The terminal learns it with its next sync (Send now is on the status bar for everyone).
    await expect
      .poll(
        async () => {
          await byTest('send-now')
            .click({ timeout: 1_000 })
            .catch(() => undefined);
          return page.evaluate(async () => {
            const g = globalThis as unknown as {
              __kupah: { data: { getPairing(): Promise<{ settings: { receipts?: { enabled: boolean } } }> } };
            };
            return (await g.__kupah.data.getPairing()).settings.receipts?.enabled ?? false;
          });
        },
        { timeout: 20_000 },
      )
      .toBe(true);
    await donate('4242424242424242', { amount: '25' });
    const receipt = /R\d+/.exec((await byTest('result-approved').textContent()) ?? '')?.[0];
    expect(await byTest('receipt-lines').textContent()).toContain('12-3456789');
    await byTest('receipt-email').fill('donor@example.com');
    await byTest('email-receipt').click();
    await expect
      .poll(async () => (await byTest('receipt-email-status').textContent()) ?? '')
      .toMatch(/donor@example\.com/);
    await expect
      .poll(
        async () => {
          const res = await fetch(`http://127.0.0.1:${port}/v1/External/Receipts?receiptNum=${receipt}`, {
            headers: { apikey: org.apiKey },
          });
          const body = (await res.json()) as { deliveries: { email: string; receiptNum: string }[] };
          return body.deliveries.map((d) => `${d.receiptNum} ${d.email}`);
        },
        { timeout: 20_000 },
      )
      .toEqual([`${receipt} d•••@example.com`]);
  });

  it("closes the shift: the device's totals, printed, recorded on the server, and the server's totals match", async () => {
    await byTest('nav-settings').click();
    // Settings, then the shift, are behind the manager PIN set above.
    await byTest('unlock-pin').fill('1234');
    await page.getByRole('button', { name: 'Unlock' }).click();
    await byTest('settings-close-shift').click();
    await byTest('unlock-pin').fill('1234');
    await page.getByRole('button', { name: 'Unlock' }).click();
    await byTest('shift-screen').waitFor();
    const received = (await byTest('shift-device-succeeded').textContent()) ?? '';
    expect(received).toMatch(/donation/);
    await page.screenshot({ path: `${ARTIFACTS}/close-shift-en.png`, fullPage: true });
    await byTest('shift-closed-by').fill('Rivka');
    await byTest('shift-close').click();
    // Reported with the next sync; the server answers its own totals of the shift.
    await byTest('shift-server').waitFor({ timeout: 20_000 });
    expect(await byTest('shift-server-totals-succeeded').textContent()).toBe(received);
    expect(await byTest('shift-server-totals-voided').textContent()).toBe(
      await byTest('shift-device-voided').textContent(),
    );
    const devices = await admin<{ devices: { deviceId: string; lastShiftClosedAt: string | null }[] }>(
      'GET',
      `/orgs/${org.orgGuid}/devices`,
    );
    expect(devices.devices.some((d) => d.lastShiftClosedAt !== null)).toBe(true);
    await byTest('shift-back').click();
  });

  it('kiosk: welcome → a custom amount → Hebrew → a cause → a donation; idle comes back to the welcome', async () => {
    await byTest('nav-settings').click();
    // Settings are behind the manager PIN set above.
    await byTest('unlock-pin').fill('1234');
    await page.getByRole('button', { name: 'Unlock' }).click();
    await byTest('settings-mode').selectOption('kiosk');
    await byTest('settings-idle').fill('15');
    await byTest('settings-save').click();
    await byTest('settings-note').waitFor();
    // What a passer-by sees: the welcome screen in the organisation's name.
    await byTest('nav-donate').click();
    await byTest('welcome-screen').waitFor();
    expect(await byTest('welcome-org').textContent()).toBe('Beth Israel');
    await page.screenshot({ path: `${ARTIFACTS}/kiosk-en.png`, fullPage: true });
    // The donor's own language, then their own amount and cause.
    await byTest('welcome-language').click();
    await expect.poll(async () => page.locator('html').getAttribute('dir')).toBe('rtl');
    await byTest('kiosk-start').click();
    await byTest('kiosk-other-amount').click();
    for (const k of '26') await byTest(`key-${k}`).click();
    await byTest('kiosk-campaigns').getByRole('button', { name: 'Building Fund' }).click();
    await page.screenshot({ path: `${ARTIFACTS}/kiosk-he.png`, fullPage: true });
    await byTest('amount-next').click();
    await byTest('card-number').fill('5555555555554444');
    await byTest('card-expiry').fill('12/30');
    await byTest('card-cvv').fill('123');
    await byTest('method-next').click();
    await byTest('donor-anonymous').click();
    await byTest('donor-next').click();
    await byTest('confirm').click();
    const approved = (await byTest('result-approved').textContent()) ?? '';
    const receipt = /R\d+/.exec(approved)?.[0];
    expect(receipt).toBeDefined();
    const hook = await waitFor(() =>
      receiver.received.find((r) => r.verified && JSON.parse(r.body).paymentNumber === receipt),
    );
    const body = paymentWebhook.parse(JSON.parse(hook.body));
    expect(Number(body.amount)).toBe(26);
    expect(body).toMatchObject({ last4Digits: '4444', isAnonymousDonation: true });
    expect(body.campaignInfo.map((c) => c.campaignName)).toEqual(['Building Fund']);

    // The next donor starts, then walks away: the kiosk clears everything and shows the welcome
    // screen again, in the device's language.
    await page.clock.install();
    await byTest('nav-donate').click();
    await byTest('kiosk-start').click();
    await byTest('preset-3600').click();
    await byTest('amount-next').click();
    await byTest('method-screen').waitFor();
    await page.clock.runFor(7_000);
    await byTest('idle-warning').waitFor();
    await page.clock.runFor(9_000);
    await byTest('welcome-screen').waitFor();
    await expect.poll(async () => page.locator('html').getAttribute('dir')).toBe('ltr');
    await byTest('kiosk-start').click();
    expect(await byTest('amount-display').textContent()).toMatch(/0\.00/);
  });
});

async function waitFor<T>(find: () => T | undefined, ms = 20_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = find();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}
