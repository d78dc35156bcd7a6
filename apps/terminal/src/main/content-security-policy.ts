/**
 * The Content-Security-Policy of every page the app loads, set as a response header so that the
 * page cannot weaken it. Scripts only from the app itself: an injected donor name or campaign
 * text cannot become code. `connect-src` stays open to http(s) because the sync server's
 * address is whatever the terminal was paired with.
 */

export interface CspOptions {
  /**
   * The Vite dev server: its React refresh preamble is an inline script and its hot reload
   * talks over a WebSocket. Never set for the built renderer.
   */
  dev: boolean;
}

export function cspHeader(options: CspOptions = { dev: false }): string {
  const directives: Record<string, string[]> = {
    'default-src': ["'self'"],
    'script-src': options.dev ? ["'self'", "'unsafe-inline'"] : ["'self'"],
    'style-src': ["'self'", "'unsafe-inline'"],
    'img-src': ["'self'", 'data:'],
    'connect-src': options.dev ? ["'self'", 'http:', 'https:', 'ws:', 'wss:'] : ["'self'", 'http:', 'https:'],
    'object-src': ["'none'"],
    'base-uri': ["'none'"],
    'frame-ancestors': ["'none'"],
  };
  return Object.entries(directives)
    .map(([name, sources]) => `${name} ${sources.join(' ')}`)
    .join('; ');
}

type Headers = Record<string, string[]>;

/** The response headers with our policy in place of any the server sent (any spelling). */
export function withCsp(headers: Headers | undefined, policy: string): Headers {
  const kept = Object.entries(headers ?? {}).filter(
    ([name]) => name.toLowerCase() !== 'content-security-policy',
  );
  return { ...Object.fromEntries(kept), 'Content-Security-Policy': [policy] };
}

/** The part of `session.webRequest` the policy needs. */
export interface HeaderHook {
  onHeadersReceived(
    listener: (
      details: { responseHeaders?: Headers; resourceType: string },
      callback: (response: { responseHeaders?: Headers }) => void,
    ) => void,
  ): void;
}

/**
 * Documents (the window and its frames) get the policy; other responses (the sync server's JSON)
 * pass untouched.
 */
export function installCsp(webRequest: HeaderHook, policy: string): void {
  webRequest.onHeadersReceived((details, callback) => {
    if (details.resourceType === 'mainFrame' || details.resourceType === 'subFrame')
      callback({ responseHeaders: withCsp(details.responseHeaders, policy) });
    else callback({});
  });
}
