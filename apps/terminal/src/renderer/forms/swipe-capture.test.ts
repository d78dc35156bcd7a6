import { afterEach, describe, expect, it } from 'vitest';
import { captureSwipes, clearSwipe, heldSwipe, type SwipeResult } from './swipe-capture.ts';

/** A minimal event target that dispatches keydown events like a keyboard-wedge reader types. */
function keyboard() {
  const listeners: ((e: KeyboardEvent) => void)[] = [];
  let prevented = 0;
  return {
    target: {
      addEventListener: (_: string, l: EventListener) => listeners.push(l as (e: KeyboardEvent) => void),
      removeEventListener: () => {},
    } as unknown as Window,
    type(text: string) {
      for (const key of [...text, 'Enter']) {
        const e = {
          key: key === 'Enter' ? 'Enter' : key,
          preventDefault: () => prevented++,
          stopPropagation: () => {},
        } as unknown as KeyboardEvent;
        for (const l of listeners) l(e);
      }
    },
    prevented: () => prevented,
  };
}

describe('magnetic-stripe swipes through a keyboard-wedge reader', () => {
  afterEach(clearSwipe);

  it('captures a swipe, keeps the number out of sight, and reports only brand and last 4', () => {
    const kb = keyboard();
    const seen: SwipeResult[] = [];
    captureSwipes(
      kb.target,
      (r) => seen.push(r),
      () => 0,
    );
    kb.type('%B4111111111111111^DOE/JOHN A^3012101000000000000000?;4111111111111111=30121010000000000000?');
    expect(seen).toEqual([{ brand: 'Visa', last4: '1111', cardHolderName: 'JOHN A DOE', errorKey: null }]);
    expect(JSON.stringify(seen)).not.toContain('4111111111111111');
    expect(heldSwipe()).toEqual({ ccNum: '4111111111111111', expiry: '12/30' });
    // Every keystroke of the swipe was kept from the focused field.
    expect(kb.prevented()).toBeGreaterThan(80);
  });

  it('ordinary typing is left alone', () => {
    const kb = keyboard();
    const seen: SwipeResult[] = [];
    captureSwipes(
      kb.target,
      (r) => seen.push(r),
      () => 0,
    );
    kb.type('18');
    expect(seen).toEqual([]);
    expect(kb.prevented()).toBe(0);
    expect(heldSwipe()).toBeNull();
  });
});
