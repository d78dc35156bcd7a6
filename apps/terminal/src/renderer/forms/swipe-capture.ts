/**
 * Keyboard-wedge card readers "type" the magnetic stripe: `%B4111…^NAME^YYMM…?;4111…=YYMM…?`
 * and Enter, far faster than a person. A burst that starts with `%` or `;` is captured here
 * (the keystrokes never reach the focused field), parsed with `parseSwipe`, and the card number
 * is held only in this module — never in React state, the DOM or a log.
 */
import { detectBrand, parseSwipe, validateCard } from '@kupah/instruments';

/** Longest pause between two keystrokes of one swipe. */
const MAX_GAP_MS = 100;

let held: { ccNum: string; expiry: string } | null = null;

export const heldSwipe = () => held;
export function clearSwipe(): void {
  held = null;
}

export interface SwipeResult {
  brand: string;
  last4: string;
  cardHolderName: string | null;
  /** i18n key of why the swiped card cannot be taken (expired, bad check digit), else null. */
  errorKey: string | null;
}

/** Listen for swipes on `target`; returns the function that stops listening. */
export function captureSwipes(
  target: Pick<Window, 'addEventListener' | 'removeEventListener'>,
  onSwipe: (r: SwipeResult) => void,
  now: () => number = () => performance.now(),
  /** A burst that looked like a swipe but could not be read (a bad swipe: try again). */
  onUnreadable: () => void = () => {},
): () => void {
  let buffer = '';
  let last = 0;
  const onKey = (e: KeyboardEvent) => {
    const t = now();
    if (buffer && t - last > MAX_GAP_MS) buffer = '';
    if (!buffer && e.key !== '%' && e.key !== ';') return;
    last = t;
    e.preventDefault();
    e.stopPropagation();
    if (e.key === 'Enter') {
      const data = parseSwipe(buffer);
      buffer = '';
      if (!data) {
        onUnreadable();
        return;
      }
      held = { ccNum: data.pan, expiry: data.expiry };
      const check = validateCard({ ccNum: data.pan, expiry: data.expiry }, new Date(), { requireCvv: false });
      const expiryBad = !check.ok && check.errors.some((x) => x.field === 'card.expiry');
      onSwipe({
        brand: detectBrand(data.pan) ?? '',
        last4: data.pan.slice(-4),
        cardHolderName: data.cardHolderName,
        errorKey: check.ok ? null : expiryBad ? 'method.errors.swipeExpired' : 'method.errors.swipeInvalid',
      });
      return;
    }
    if (e.key.length === 1) buffer += e.key;
  };
  target.addEventListener('keydown', onKey as EventListener, true);
  return () => target.removeEventListener('keydown', onKey as EventListener, true);
}
