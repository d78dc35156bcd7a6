/**
 * What devices receive of donors: never a full phone number or e-mail address (a lost or stolen
 * terminal, or a donor at a kiosk, must not yield the contact list), only masked values and keyed
 * hashes that find a donor by a whole value typed exactly.
 */
import { createHmac } from 'node:crypto';
import { contactHashInput, pullResponse } from '@kupah/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maskEmail, maskPhone } from '../people/contact-mask.ts';
import { pairTestDevice, type TestDevice } from '../testing/device-client.ts';
import { createHarness, type Harness, keyAuth, testDatabases } from '../testing/harness.ts';

const hmac = (key: string, input: string) =>
  createHmac('sha256', Buffer.from(key, 'base64url')).update(input).digest('hex');

describe.each(await testDatabases())('pulled donor contact details on %s', (kind) => {
  let h: Harness;
  let device: TestDevice;
  beforeAll(async () => {
    h = await createHarness(kind);
    device = await pairTestDevice(h, 'Contact kiosk');
  });
  afterAll(async () => {
    await h?.close();
  });

  /** Every page of the pull from the start, as the raw JSON text the device receives. */
  async function pullAll(d: TestDevice) {
    const pages: string[] = [JSON.stringify(d.pairing)];
    const bodies = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const r = await d.pull(cursor, 50);
      expect(r.status).toBe(200);
      expect(pullResponse.safeParse(r.body).success).toBe(true);
      pages.push(JSON.stringify(r.body));
      bodies.push(r.body);
      cursor = r.body.cursor;
      if (!r.body.more) break;
    }
    return { text: pages.join('\n'), bodies };
  }

  it('a donor saved with a phone and an e-mail reaches devices masked, with keyed hashes only', async () => {
    const saved = await h.request(
      'PUT',
      '/V1/External/SaveDonor',
      {
        orgGuid: h.org.orgGuid,
        donorID: '',
        firstName: 'Dvora',
        lastName: 'Katz',
        donorPhones: [{ phoneNumber: '+972 52-987-6543' }, { phoneNumber: '(212) 555-0142' }],
        donorEmails: [{ emailAddress: 'Dvora.Katz@Example.com' }],
      },
      keyAuth(h),
    );
    expect(saved.status).toBe(200);
    const fresh = await pairTestDevice(h, 'Fresh device');
    for (const d of [device, fresh]) {
      // A pull hands out only transactions below the oldest one still running on the database (its
      // horizon): another test file's open transaction on the same PostgreSQL may hold the donor
      // back a moment. Pull again until it is there (bounded).
      const savedDonor = (b: { donors: { accountNum: string }[] }[]) =>
        b.some((x) => x.donors.some((p) => p.accountNum === saved.body.donorId));
      let pulled = await pullAll(d);
      for (let i = 0; i < 50 && !savedDonor(pulled.bodies); i++) {
        await new Promise((r) => setTimeout(r, 200));
        pulled = await pullAll(d);
      }
      const { text, bodies } = pulled;
      // The attack: look for the donor's contact details anywhere in what the device got.
      for (const secret of ['9876543', '529876543', '2125550142', '5550142', 'dvora.katz', 'Dvora.Katz']) {
        expect(text).not.toContain(secret);
      }
      const donor = bodies.flatMap((b) => b.donors).find((p) => p.accountNum === saved.body.donorId);
      expect(donor).toMatchObject({
        firstName: 'Dvora',
        phones: ['••• ••• 6543', '••• ••• 0142'],
        emails: ['d•••@example.com'],
      });
      // The hashes find the donor by a whole value typed in any usual form, under the org's key.
      const key = bodies.at(-1).contactKey as string;
      expect(Buffer.from(key, 'base64url')).toHaveLength(32);
      for (const typed of ['052-987-6543', '+972529876543']) {
        expect(donor.contactHashes).toContain(hmac(key, contactHashInput('phone', typed)!));
      }
      expect(donor.contactHashes).toContain(hmac(key, contactHashInput('phone', '212 555 0142')!));
      expect(donor.contactHashes).toContain(
        hmac(key, contactHashInput('email', ' dvora.katz@example.COM ')!),
      );
      expect(donor.contactHashes).toHaveLength(3);
    }
    // One key per organisation: every device hashes alike.
    expect((await fresh.pull()).body.contactKey).toBe((await device.pull()).body.contactKey);
  });

  it('masks keep only the last four digits and the first letter of the address', () => {
    expect(maskPhone('+1 (212) 555-0142')).toBe('••• ••• 0142');
    expect(maskPhone('12')).toBe('•••');
    expect(maskEmail('David@Example.com')).toBe('d•••@example.com');
    expect(maskEmail('not an address')).toBe('•••');
  });
});
