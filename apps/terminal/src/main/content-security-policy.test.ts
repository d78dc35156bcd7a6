import { describe, expect, it, vi } from 'vitest';
import { cspHeader, type HeaderHook, installCsp, withCsp } from './content-security-policy.ts';

describe('content security policy', () => {
  it('allows scripts only from the app, and no plugins, base changes or framing', () => {
    expect(cspHeader()).toBe(
      "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
        "connect-src 'self' http: https:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
    );
  });

  it('relaxes only what the dev server needs (its inline preamble and hot reload socket)', () => {
    const dev = cspHeader({ dev: true });
    expect(dev).toContain("script-src 'self' 'unsafe-inline';");
    expect(dev).toContain("connect-src 'self' http: https: ws: wss:;");
    expect(dev).toContain("object-src 'none'");
    expect(cspHeader({ dev: false })).not.toContain('unsafe-eval');
  });

  it('replaces a policy the server sent, whatever its spelling, and keeps other headers', () => {
    const headers = withCsp(
      { 'content-security-policy': ['default-src *'], 'Content-Type': ['text/html'] },
      'x',
    );
    expect(headers).toEqual({ 'Content-Type': ['text/html'], 'Content-Security-Policy': ['x'] });
    expect(withCsp(undefined, 'x')).toEqual({ 'Content-Security-Policy': ['x'] });
  });

  it('is set on documents through webRequest, and other responses pass untouched', () => {
    let listener: Parameters<HeaderHook['onHeadersReceived']>[0] | undefined;
    installCsp(
      {
        onHeadersReceived: (l) => {
          listener = l;
        },
      },
      'policy',
    );
    const callback = vi.fn();
    listener!({ resourceType: 'mainFrame', responseHeaders: { A: ['1'] } }, callback);
    expect(callback).toHaveBeenLastCalledWith({
      responseHeaders: { A: ['1'], 'Content-Security-Policy': ['policy'] },
    });
    listener!({ resourceType: 'subFrame' }, callback);
    expect(callback).toHaveBeenLastCalledWith({ responseHeaders: { 'Content-Security-Policy': ['policy'] } });
    listener!({ resourceType: 'xhr', responseHeaders: { A: ['1'] } }, callback);
    expect(callback).toHaveBeenLastCalledWith({});
  });
});
