/**
 * Hash routing (`#/payments/1234`): the server serves one index.html at /console/, and a one-time
 * link (`#/link/<token>`) never reaches the server's logs.
 */
import { useEffect, useState } from 'react';

export function parseHash(hash: string): string[] {
  const path = hash.replace(/^#\/?/, '').split('?')[0] ?? '';
  return path
    .split('/')
    .filter(Boolean)
    .map((s) => decodeURIComponent(s));
}

export function useRoute(): string[] {
  const [route, setRoute] = useState(() => parseHash(window.location.hash));
  useEffect(() => {
    const on = () => setRoute(parseHash(window.location.hash));
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return route;
}

export function navigate(path: string): void {
  window.location.hash = `#/${path.replace(/^\/+/, '')}`;
}

export const hrefTo = (...parts: Array<string | number>) =>
  `#/${parts.map((p) => encodeURIComponent(String(p))).join('/')}`;
