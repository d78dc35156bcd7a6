/**
 * One sync at a time per device, across windows and tabs. The browser's Web Locks do that
 * (`navigator.locks`, held until the callback's promise settles, released if the tab dies).
 * Where there are none (Node, old browsers) an in-process mutex keeps at least the instances of
 * one process apart. Tests inject their own to play two tabs on one database.
 */

export interface SyncLocks {
  request<T>(name: string, callback: () => Promise<T>): Promise<T>;
}

/** Mutual exclusion by name within this JavaScript realm. */
export function createProcessLocks(): SyncLocks {
  const tails = new Map<string, Promise<unknown>>();
  return {
    request<T>(name: string, callback: () => Promise<T>): Promise<T> {
      const previous = tails.get(name) ?? Promise.resolve();
      const run = previous.then(callback, callback);
      const tail = run.then(
        () => undefined,
        () => undefined,
      );
      tails.set(name, tail);
      void tail.then(() => {
        if (tails.get(name) === tail) tails.delete(name);
      });
      return run;
    },
  };
}

const processLocks = createProcessLocks();

interface NavigatorWithLocks {
  locks?: { request<T>(name: string, callback: () => Promise<T>): Promise<T> };
}

/** Web Locks when the platform has them, else one mutex shared by every instance in this realm. */
export function defaultSyncLocks(): SyncLocks {
  const nav = (globalThis as { navigator?: NavigatorWithLocks }).navigator;
  const locks = nav?.locks;
  if (locks && typeof locks.request === 'function') {
    return { request: (name, callback) => locks.request(name, () => callback()) };
  }
  return processLocks;
}

export const syncLockName = (deviceId: string): string => `kupah-sync-${deviceId}`;
