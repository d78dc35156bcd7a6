import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, keyAuth, testDatabases } from '../testing/harness.ts';

describe.each(await testDatabases())('SaveDonor and SaveCollector on %s', (kind) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(kind);
  });
  afterAll(async () => {
    await h?.close();
  });
  const saveDonor = (body: Record<string, unknown>) =>
    h.request('PUT', '/V1/External/SaveDonor', { orgGuid: h.org.orgGuid, ...body }, keyAuth(h));
  const saveCollector = (body: Record<string, unknown>) =>
    h.request('PUT', '/V1/External/SaveCollector', { orgGuid: h.org.orgGuid, ...body }, keyAuth(h));
  const full = {
    title: 'Mr.',
    firstName: 'Chaim',
    lastName: 'Rosen',
    titleHebrew: 'הרב',
    firstNameHebrew: 'חיים',
    lastNameHebrew: 'רוזן',
    suffixHebrew: 'שליט"א',
    donorPhones: [{ phoneLabel: 'Cell', phoneNumber: '718-555-0133', countryCode: '1' }],
    donorEmails: [{ emailLabel: 'Home', emailAddress: 'chaim@example.org' }],
    donorAddresses: [
      {
        addressLabel: 'Home',
        careOf: null,
        houseNum: '12',
        streetName: 'Ocean Pkwy',
        unit: '3B',
        city: 'Brooklyn',
        state: 'NY',
        zip: '11218',
        country: 'US',
      },
    ],
  };

  it('rule 1: an empty id creates and answers the full record with the generated id (letter + digits)', async () => {
    const r = await saveDonor({ donorID: '', ...full });
    expect(r.status).toBe(200);
    expect(r.body.donorId).toMatch(/^D\d+$/);
    expect(r.body).toMatchObject({ ...full, orgGuid: h.org.orgGuid });
    expect(r.body).not.toHaveProperty('donorID');
  });

  it('rule 2 and 4: update merges; null keeps; "" and [] delete', async () => {
    const created = (await saveDonor({ donorID: '', ...full })).body;
    const r = await saveDonor({
      donorId: created.donorId,
      firstName: null,
      title: '',
      donorPhones: [],
      donorEmails: null,
      lastName: 'Rosenberg',
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      donorId: created.donorId,
      firstName: 'Chaim',
      lastName: 'Rosenberg',
      title: null,
      donorPhones: [],
      donorEmails: full.donorEmails,
      donorAddresses: full.donorAddresses,
      firstNameHebrew: 'חיים',
    });
  });

  it('rule 3: a valid but unknown id creates the donor with that id', async () => {
    const r = await saveDonor({ donorID: 'D7770001', firstName: 'Leah', lastName: 'Gross' });
    expect(r.status).toBe(200);
    expect(r.body.donorId).toBe('D7770001');
    const again = await saveDonor({ donorID: 'D7770001', firstName: 'Leah', lastName: 'Grossman' });
    expect(again.body.lastName).toBe('Grossman');
    const bad = await saveDonor({ donorID: 'XYZ', firstName: 'A', lastName: 'B' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.fields[0].field).toBe('donorID');
  });

  it('rule 5: a complete English or Hebrew name pair is required (also after a merge)', async () => {
    const none = await saveDonor({ donorID: '', firstName: 'Only' });
    expect(none.status).toBe(400);
    const hebrew = await saveDonor({ donorID: '', firstNameHebrew: 'יעקב', lastNameHebrew: 'שפירא' });
    expect(hebrew.status).toBe(200);
    const erase = await saveDonor({ donorID: hebrew.body.donorId, lastNameHebrew: '' });
    expect(erase.status).toBe(400);
    const kept = await saveDonor({ donorID: hebrew.body.donorId });
    expect(kept.body.lastNameHebrew).toBe('שפירא');
  });

  it('a bad e-mail address or too many phones is a 400 naming the field', async () => {
    const r = await saveDonor({
      donorID: '',
      firstName: 'A',
      lastName: 'B',
      donorEmails: [{ emailAddress: 'not-an-email' }],
    });
    expect(r.body.error.fields[0].field).toBe('donorEmails.0.emailAddress');
    const many = await saveDonor({
      donorID: '',
      firstName: 'A',
      lastName: 'B',
      donorPhones: Array.from({ length: 21 }, () => ({ phoneNumber: '1' })),
    });
    expect(many.body.error.fields[0].field).toBe('donorPhones');
  });

  it('collectors: create, update (null deletes for collectors), unknown id 404, collectorId spelling', async () => {
    const c = await saveCollector({
      collectorID: '',
      firstName: 'Shmuel',
      lastName: 'Berg',
      collectorPhones: [{ phoneLabel: 'Cell', phoneNumber: '555', countryCode: '1' }],
    });
    expect(c.status).toBe(200);
    expect(c.body.collectorId).toMatch(/^C\d+$/);
    const u = await saveCollector({ collectorId: c.body.collectorId, collectorPhones: null, title: 'R.' });
    expect(u.body).toMatchObject({ collectorPhones: [], title: 'R.', firstName: 'Shmuel' });
    const missing = await saveCollector({ collectorID: 'C99999999', firstName: 'A', lastName: 'B' });
    expect(missing.status).toBe(404);
    expect(missing.body.error.errorCode).toBe('NOT_FOUND');
  });

  it('concurrent creates get distinct ids', async () => {
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => saveDonor({ donorID: '', firstName: `F${i}`, lastName: 'L' })),
    );
    expect(new Set(replies.map((r) => r.body.donorId)).size).toBe(20);
  });
});
