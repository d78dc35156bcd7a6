/**
 * Keyboard operation of every screen: Escape goes one step back; Enter, when focus is not in a
 * control that uses Enter itself, presses the screen's primary button (`data-primary`) if it is
 * enabled. A screen's own handler may claim a key first with `preventDefault()`.
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
      if (target && (OWN_ENTER.has(target.tagName) || target.isContentEditable)) return;
      const primary = root()?.querySelector<HTMLButtonElement>('[data-primary]');
      if (primary && !primary.disabled && primary.getAttribute('aria-disabled') !== 'true') {
        e.preventDefault();
        primary.click();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [back, root]);
}
