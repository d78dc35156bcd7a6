import { describe, expect, it } from 'vitest';
import { createMainLog, errorFields } from './main-log.ts';

describe('main log', () => {
  it('writes one JSON line per event to every sink, and survives a failing sink', () => {
    const lines: string[] = [];
    const log = createMainLog(
      [
        () => {
          throw new Error('disk full');
        },
        (line) => lines.push(line),
      ],
      () => new Date('2030-01-02T03:04:05Z'),
    );
    log.error('renderer gone', { reason: 'oom' });
    log.info('started');
    log.warn('switch ignored', { ignored: ['--devtools'] });
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      { at: '2030-01-02T03:04:05.000Z', level: 'error', message: 'renderer gone', reason: 'oom' },
      { at: '2030-01-02T03:04:05.000Z', level: 'info', message: 'started' },
      { at: '2030-01-02T03:04:05.000Z', level: 'warn', message: 'switch ignored', ignored: ['--devtools'] },
    ]);
    expect(lines.every((l) => l.endsWith('\n') && !l.slice(0, -1).includes('\n'))).toBe(true);
  });

  it('keeps an error message and stack', () => {
    expect(errorFields(new Error('boom'))).toMatchObject({
      error: 'boom',
      stack: expect.stringContaining('boom'),
    });
    expect(errorFields('plain')).toEqual({ error: 'plain' });
  });
});
