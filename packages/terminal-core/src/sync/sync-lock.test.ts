import { describe, expect, it } from 'vitest';
import { createProcessLocks, defaultSyncLocks } from './sync-lock.ts';

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('sync locks', () => {
  it('the process lock runs holders of one name one at a time, in order, also after a failure', async () => {
    const locks = createProcessLocks();
    const log: string[] = [];
    let inside = 0;
    let most = 0;
    const hold = (tag: string, fail = false) =>
      locks.request('kupah-sync-dev1', async () => {
        inside++;
        most = Math.max(most, inside);
        log.push(`${tag}>`);
        await tick();
        log.push(`<${tag}`);
        inside--;
        if (fail) throw new Error(tag);
        return tag;
      });
    const results = await Promise.allSettled([hold('a'), hold('b', true), hold('c')]);
    expect(most).toBe(1);
    expect(log).toEqual(['a>', '<a', 'b>', '<b', 'c>', '<c']);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });

  it('other names do not wait', async () => {
    const locks = createProcessLocks();
    let release!: () => void;
    const held = locks.request('a', () => new Promise<void>((r) => (release = r)));
    await expect(locks.request('b', async () => 'free')).resolves.toBe('free');
    release();
    await held;
  });

  it('without Web Locks (Node) the default is one process-wide mutex', () => {
    expect(defaultSyncLocks()).toBe(defaultSyncLocks());
  });
});
