/**
 * A new version of the web build (a waiting service worker) is applied only between donations:
 * on the start screen with nothing typed and no result on screen. Applying reloads the page, so
 * doing it in the middle of a donation would throw away what the cashier or donor has entered.
 */
import type { TerminalState } from '../store/terminal-store.ts';

type Idle = Pick<TerminalState, 'screen' | 'draft' | 'waiting' | 'result'>;

/** The terminal is between donations: nothing entered that an update (a reload) would lose. */
export function betweenDonations(s: Idle): boolean {
  const d = s.draft;
  const nothingTyped =
    d.amountText === '' &&
    !d.donor.firstName &&
    !d.donor.lastName &&
    !d.donor.firstNameHebrew &&
    !d.donor.lastNameHebrew &&
    !d.donor.phone &&
    !d.donor.email &&
    d.donor.existing === null;
  return (s.screen === 'amount' || s.screen === 'pairing') && nothingTyped && !s.waiting && s.result === null;
}

interface Store {
  getState(): Idle;
  subscribe(listener: (state: Idle) => void): () => void;
}

/**
 * Calls `apply` once, as soon as the terminal is between donations (at once if it is now).
 * Returns a cancel function.
 */
export function applyWhenIdle(store: Store, apply: () => void): () => void {
  let done = false;
  let unsubscribe: () => void = () => {};
  const check = (s: Idle) => {
    if (done || !betweenDonations(s)) return;
    done = true;
    unsubscribe();
    apply();
  };
  unsubscribe = store.subscribe(check);
  check(store.getState());
  if (done) unsubscribe();
  return () => {
    done = true;
    unsubscribe();
  };
}
