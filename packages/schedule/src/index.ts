export { civilDateIn } from './civil.ts';
export {
  type AnniversaryRule,
  computeInstalments,
  HORIZON_YEARS,
  type Instalment,
  MAX_INSTALMENTS,
  type ScheduleTerms,
  ScheduleTermsError,
  type SpecialDayPreset,
} from './engine.ts';
export { hebrewDateOf, isShabbatOrYomTov } from './hebrew.ts';
