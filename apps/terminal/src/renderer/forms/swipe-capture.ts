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
  /** The first key of what may be a swipe, and where it was typed: given back if nothing follows. */
  let first: { key: string; target: EventTarget | null } | null = null;
  let giveBack: ReturnType<typeof setTimeout> | null = null;
  const cancelGiveBack = () => {
    if (giveBack) clearTimeout(giveBack);
    giveBack = null;
  };
  const onKey = (e: KeyboardEvent) => {
    const t = now();
    if (buffer && t - last > MAX_GAP_MS) buffer = '';
    if (!buffer && e.key !== '%' && e.key !== ';') return;
    last = t;
    e.preventDefault();
    e.stopPropagation();
    if (!buffer) {
      first = { key: e.key, target: e.target };
      cancelGiveBack();
      giveBack = setTimeout(() => {
        giveBack = null;
        // Nothing followed at reader speed: a person typed it.
        if (buffer === first?.key) {
          typeInto(first.target, first.key);
          buffer = '';
        }
      }, MAX_GAP_MS + 20);
    } else cancelGiveBack();
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
  return () => {
    cancelGiveBack();
    target.removeEventListener('keydown', onKey as EventListener, true);
  };
}

/** Types `text` into a text field at its caret, as the keyboard would have (React sees an input event). */
export function typeInto(target: EventTarget | null, text: string): void {
  const field = target as HTMLInputElement | HTMLTextAreaElement | null;
  if (!field || typeof field.value !== 'string' || typeof field.dispatchEvent !== 'function') return;
  if ((field as HTMLInputElement).readOnly || (field as HTMLInputElement).disabled) return;
  const start = field.selectionStart ?? field.value.length;
  const end = field.selectionEnd ?? start;
  const next = `${field.value.slice(0, start)}${text}${field.value.slice(end)}`;
  // The prototype's setter: React tracks the value it set, and notices this one as new.
  const setter = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(field), 'value')?.set;
  if (setter) setter.call(field, next);
  else field.value = next;
  try {
    field.setSelectionRange(start + text.length, start + text.length);
  } catch {
    // Some input types have no caret (number, email): the value is set all the same.
  }
  field.dispatchEvent(new Event('input', { bubbles: true }));
}
