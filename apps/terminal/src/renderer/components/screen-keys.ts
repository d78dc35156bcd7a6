/**
 * Keyboard operation of every screen: Escape goes one step back; Enter, when focus is not in a
 * control that uses Enter itself, presses the screen's primary button (`data-primary`) if it is
 * enabled. Radio buttons and checkboxes have no use for Enter: it goes on from them too. On a
 * choice button (`aria-pressed`, e.g. "Anonymous"), Enter chooses it (if not chosen yet) and goes
 * on. A screen's own handler may claim a key first with `preventDefault()`.
 */
import { useEffect } from 'react';

const OWN_ENTER = new Set(['INPUT', 'TEXTAREA', 'SELECT', 'BUTTON', 'A', 'SUMMARY']);

export function useScreenKeys(back: () => void, root: () => ParentNode | null = () => document): void {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
      if (e.key === 'Escape') {
        back();
        return;
      }
      if (e.key !== 'Enter') return;
      const target = e.target instanceof HTMLElement ? e.target : null;
      const primaryNow = () => {
        const primary = root()?.querySelector<HTMLButtonElement>('[data-primary]');
        if (
          primary &&
          primary !== target &&
          !primary.disabled &&
          primary.getAttribute('aria-disabled') !== 'true'
        ) {
          primary.click();
          return true;
        }
        return false;
      };
      if (
        target?.tagName === 'BUTTON' &&
        target.hasAttribute('aria-pressed') &&
        !target.hasAttribute('data-primary')
      ) {
        e.preventDefault();
        if (target.getAttribute('aria-pressed') !== 'true') target.click();
        // After the choice has been rendered (the primary button may only now be enabled).
        setTimeout(primaryNow, 0);
        return;
      }
      const choice =
        target instanceof HTMLInputElement && (target.type === 'radio' || target.type === 'checkbox');
      if (target && !choice && (OWN_ENTER.has(target.tagName) || target.isContentEditable)) return;
      if (primaryNow()) e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [back, root]);
}
