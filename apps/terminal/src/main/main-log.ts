/**
 * The main process's log: one JSON line per event, to stderr and (when given) to a file in the
 * app's log folder, written synchronously so the line before a crash is not lost. A packaged
 * terminal has no console anyone reads; the file is what support asks for.
 */

export type LogFields = Record<string, unknown>;

export interface MainLog {
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

export function createMainLog(
  sinks: Array<(line: string) => void>,
  now: () => Date = () => new Date(),
): MainLog {
  const write = (level: 'info' | 'warn' | 'error', message: string, fields?: LogFields) => {
    const line = `${JSON.stringify({ at: now().toISOString(), level, message, ...fields })}\n`;
    for (const sink of sinks) {
      try {
        sink(line);
      } catch {
        // A full disk must not take the terminal down with it.
      }
    }
  };
  return {
    info: (message, fields) => write('info', message, fields),
    warn: (message, fields) => write('warn', message, fields),
    error: (message, fields) => write('error', message, fields),
  };
}

/** An error as log fields (an Error's own properties do not survive JSON.stringify). */
export const errorFields = (error: unknown): LogFields =>
  error instanceof Error ? { error: error.message, stack: error.stack } : { error: String(error) };
