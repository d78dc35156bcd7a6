/**
 * Cleanup registry for benchmarks: everything a benchmark starts (server process, temp dirs,
 * databases) registers an undo here, and `runCleanups` runs them in reverse order on success,
 * failure, SIGINT/SIGTERM or the watchdog, each bounded in time.
 */

type CleanupFn = () => Promise<unknown> | unknown;

const cleanups: { label: string; fn: CleanupFn }[] = [];
let running: Promise<void> | null = null;

export interface Registered {
  /** Run the undo now (once) and forget it. */
  run(): Promise<void>;
  /** Forget it without running it (the thing ended on its own). */
  drop(): void;
}

/** Register an undo, run by `runCleanups` unless run or dropped before. */
export function onCleanup(label: string, fn: CleanupFn): Registered {
  const entry = { label, fn };
  cleanups.push(entry);
  const drop = () => {
    const i = cleanups.indexOf(entry);
    if (i >= 0) cleanups.splice(i, 1);
  };
  return {
    async run() {
      if (!cleanups.includes(entry)) return;
      drop();
      await withTimeout(Promise.resolve().then(fn), 30_000, `cleanup: ${label}`);
    },
    drop,
  };
}

/** Run every registered undo, newest first; failures are reported and do not stop the others. */
export function runCleanups(): Promise<void> {
  running ??= (async () => {
    while (cleanups.length > 0) {
      const { label, fn } = cleanups.pop()!;
      try {
        await withTimeout(Promise.resolve().then(fn), 30_000, `cleanup: ${label}`);
      } catch (err) {
        console.error(`bench: cleanup "${label}" failed: ${errorText(err)}`);
      }
    }
  })().finally(() => {
    running = null;
  });
  return running;
}

/** On SIGINT/SIGTERM: clean up, then exit 130/143. A second signal while cleaning is ignored. */
export function installSignalHandlers(): void {
  let exiting = false;
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.on(signal, () => {
      if (exiting) {
        console.error(`bench: ${signal} again; still cleaning up`);
        return;
      }
      exiting = true;
      console.error(`\nbench: ${signal}; stopping the server and cleaning up`);
      void runCleanups().finally(() => process.exit(code));
    });
  }
}

/** Abort the whole run (with cleanup, exit 1) if it is still going after `ms`. */
export function startWatchdog(ms: number): () => void {
  const timer = setTimeout(() => {
    console.error(`bench: still running after ${Math.round(ms / 1000)} s; aborting`);
    void runCleanups().finally(() => process.exit(1));
  }, ms);
  timer.unref();
  return () => clearTimeout(timer);
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
