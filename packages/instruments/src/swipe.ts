export interface SwipeData {
  /** Digits only. */
  pan: string;
  /** `MM/YY`. */
  expiry: string;
  /** `JOHN A DOE` from track 1's `DOE/JOHN A`; null when there is no track 1 or no name on it. */
  cardHolderName: string | null;
}

interface TrackData {
  pan: string;
  expiry: string;
}

/** Track 1 (ISO/IEC 7813 format B): `%B` PAN `^` NAME `^` YYMM service-code discretionary `?`. */
const TRACK1 = /%?B([0-9 ]{12,23})\^([^^%;?]{0,40})\^(\d{2})(\d{2})/;
/** Track 2: `;` PAN `=` YYMM service-code discretionary `?`. */
const TRACK2 = /(?<!\d)(\d{12,19})=(\d{2})(\d{2})/;

/** Longest input we look at; a swipe is well under 300 characters. */
const MAX_INPUT = 1024;

function toExpiry(yy: string, mm: string): string | null {
  const month = Number(mm);
  return month >= 1 && month <= 12 ? `${mm}/${yy}` : null;
}

function holderName(raw: string): string | null {
  const slash = raw.indexOf('/');
  const joined = slash < 0 ? raw : `${raw.slice(slash + 1)} ${raw.slice(0, slash)}`;
  const name = joined.replace(/\s+/g, ' ').trim();
  return name === '' ? null : name;
}

function parseTrack2(raw: string): TrackData | null {
  const m = TRACK2.exec(raw);
  if (!m) return null;
  const expiry = toExpiry(m[2] ?? '', m[3] ?? '');
  return m[1] && expiry ? { pan: m[1], expiry } : null;
}

function parseTrack1(raw: string): (TrackData & { name: string | null }) | null {
  const m = TRACK1.exec(raw);
  if (!m) return null;
  const pan = (m[1] ?? '').replace(/ /g, '');
  const expiry = toExpiry(m[3] ?? '', m[4] ?? '');
  if (!/^\d{12,19}$/.test(pan) || !expiry) return null;
  return { pan, expiry, name: holderName(m[2] ?? '') };
}

/**
 * Parses what a keyboard-wedge magnetic-stripe reader types: track 1
 * (`%B4242424242424242^DOE/JOHN A^2512101…?`), track 2 (`;4242424242424242=2512101…?`), or both
 * one after the other; start and end sentinels may be missing. Returns only the PAN, the expiry
 * as `MM/YY` and the cardholder name (`JOHN A DOE`), or null when no track can be read or the two
 * tracks disagree. Nothing else from the raw data (service code, discretionary data) is returned.
 * The PAN is not Luhn-checked here: pass the result to `validateCard`.
 */
export function parseSwipe(raw: string): SwipeData | null {
  if (typeof raw !== 'string' || raw.length > MAX_INPUT) return null;
  const track1 = parseTrack1(raw);
  const track2 = parseTrack2(raw);
  if (track1 && track2 && (track1.pan !== track2.pan || track1.expiry !== track2.expiry)) return null;
  const track = track2 ?? track1;
  if (!track) return null;
  return { pan: track.pan, expiry: track.expiry, cardHolderName: track1?.name ?? null };
}
