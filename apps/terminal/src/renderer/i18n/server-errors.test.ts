import { ERROR_CODES } from '@kupah/contracts';
import { describe, expect, it } from 'vitest';
import { en } from './en.ts';
import { he } from './he.ts';
import { applyLanguage, i18n } from './index.ts';
import { errorText } from './server-errors.ts';

describe('server messages in the interface language, by error code', () => {
  it('every code the server can send has an English and a Hebrew text', () => {
    for (const code of Object.values(ERROR_CODES)) {
      expect(en.serverErrors, code).toHaveProperty(code);
      expect(he.serverErrors, code).toHaveProperty(code);
      expect((he.serverErrors as Record<string, string>)[code], code).toMatch(/[\u0590-\u05FF]/);
    }
  });

  it('Hebrew: the code decides the text; the issuer’s reason or the field follows; unknown codes keep the server text', async () => {
    await applyLanguage('he');
    try {
      const t = i18n.t.bind(i18n);
      expect(
        errorText(t, { errorCode: 'GATEWAY_UNAVAILABLE', message: 'The gateway could not be reached' }),
      ).toBe('אין חיבור לחברת הסליקה: לא חויב דבר; ינוסה שוב');
      expect(errorText(t, { errorCode: 'CARD_DECLINED', message: 'Insufficient funds' })).toBe(
        'נדחה על ידי חברת האשראי (Insufficient funds)',
      );
      expect(errorText(t, { errorCode: 'SOLA_05', message: 'Do not honor' })).toBe(
        'חברת הסליקה דחתה או נכשלה (SOLA_05) (Do not honor)',
      );
      expect(errorText(t, { errorCode: 'SOMETHING_NEW', message: 'A new thing' })).toBe('A new thing');
      expect(errorText(t, null)).toBe('');
    } finally {
      await applyLanguage('en');
    }
  });
});
