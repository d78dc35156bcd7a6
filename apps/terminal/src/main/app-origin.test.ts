import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { appTarget, isAppUrl, isTrustedSender } from './app-origin.ts';

const file = '/opt/Kupah Terminal/resources/app.asar/dist/renderer-electron/index.html';
const fileTarget = appTarget(file, null);
const devTarget = appTarget(file, 'http://localhost:5173/');
const own = pathToFileURL(file).href;

describe('app origin', () => {
  it('the built renderer is its own index.html on disk, with any query or fragment', () => {
    expect(isAppUrl(own, fileTarget)).toBe(true);
    expect(isAppUrl(`${own}?e2e=1#/donate`, fileTarget)).toBe(true);
    expect(isAppUrl(pathToFileURL('/etc/passwd').href, fileTarget)).toBe(false);
    expect(isAppUrl(own.replace('index.html', 'other.html'), fileTarget)).toBe(false);
    expect(isAppUrl('https://evil.example/index.html', fileTarget)).toBe(false);
    expect(isAppUrl('not a url', fileTarget)).toBe(false);
  });

  it('the dev server is its origin', () => {
    expect(devTarget).toEqual({ kind: 'url', url: 'http://localhost:5173/' });
    expect(isAppUrl('http://localhost:5173/src/screens/x.tsx', devTarget)).toBe(true);
    expect(isAppUrl('http://localhost:5174/', devTarget)).toBe(false);
    expect(isAppUrl(own, devTarget)).toBe(false);
  });

  it('only the top-level app page is a trusted IPC sender', () => {
    expect(isTrustedSender({ senderFrame: { url: own, parent: null } }, fileTarget)).toBe(true);
    expect(isTrustedSender({ senderFrame: { url: own, parent: {} } }, fileTarget)).toBe(false);
    expect(isTrustedSender({ senderFrame: { url: 'https://evil.example/', parent: null } }, fileTarget)).toBe(
      false,
    );
    expect(isTrustedSender({ senderFrame: null }, fileTarget)).toBe(false);
  });
});
