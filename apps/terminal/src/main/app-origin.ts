/**
 * What counts as "the app": the built renderer's index.html on disk, or the dev server's origin.
 * Navigation anywhere else is refused, and IPC from anywhere else is not answered, so a link or
 * a redirect in synced data can never put a foreign page next to the bridge.
 */
import { pathToFileURL } from 'node:url';

export type AppTarget = { kind: 'file'; file: string } | { kind: 'url'; url: string };

export function appTarget(rendererFile: string, rendererUrl: string | null): AppTarget {
  return rendererUrl ? { kind: 'url', url: rendererUrl } : { kind: 'file', file: rendererFile };
}

/** Whether `url` is the app's own page (any query or fragment; never another file or origin). */
export function isAppUrl(url: string, target: AppTarget): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (target.kind === 'url') return parsed.origin === new URL(target.url).origin;
  const own = pathToFileURL(target.file);
  return parsed.protocol === 'file:' && parsed.host === own.host && parsed.pathname === own.pathname;
}

/** The frame an IPC message came from, as Electron reports it (null once the frame is gone). */
export interface SenderEvent {
  senderFrame: { url: string; parent: unknown } | null;
}

/** Messages are answered only from the app's own top-level page, never from a frame inside it. */
export function isTrustedSender(event: SenderEvent, target: AppTarget): boolean {
  const frame = event.senderFrame;
  return frame !== null && frame.parent === null && isAppUrl(frame.url, target);
}
