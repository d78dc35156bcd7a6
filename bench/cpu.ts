/**
 * Where the CPU went during a measured run (Linux /proc; null elsewhere): the server process,
 * this process (the load generator), PostgreSQL processes, other processes this benchmark started
 * (Chromium), and everything else on the machine.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

export interface CpuSnapshot {
  machineBusyMs: number;
  machineTotalMs: number;
  /** Time the hypervisor ran something else while this VM wanted a CPU. */
  stealMs: number;
  serverMs: number;
  loadGeneratorMs: number;
  postgresMs: number;
  /** Descendants of this process other than the server (e.g. Chromium and its helpers). */
  childrenMs: number;
}

export interface CpuSplit {
  /** Share of all CPUs busy during the run, percent. */
  machineBusyPercent: number;
  /** Share of all CPUs stolen by the hypervisor (counted in busy and in `other`), percent. */
  stealPercent: number;
  /**
   * CPU milliseconds per operation (successful charge, or committed insert), by consumer;
   * `children`: processes this benchmark started other than the server (Chromium); `other`: the rest
   * of the machine (other work, the kernel's own threads).
   */
  msPerOp: {
    server: number;
    loadGenerator: number;
    postgres: number;
    children: number;
    other: number;
    total: number;
  };
}

let tickMs: number | undefined;
function msPerTick(): number {
  if (tickMs === undefined) {
    let hz = 100;
    try {
      hz = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8', timeout: 5_000 }).trim()) || 100;
    } catch {
      // keep the Linux default
    }
    tickMs = 1000 / hz;
  }
  return tickMs;
}

/** utime + stime of a process, in ms; 0 when it is gone. */
function processMs(stat: string): number {
  // The command name (field 2) may contain spaces; fields are counted after its closing parenthesis.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(rest[11]) + Number(rest[12])) * msPerTick();
}

function readStat(pid: number | string): string | null {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
}

/**
 * The database a PostgreSQL client backend serves, from its process title
 * (`postgres: 15/main: <user> <database> <host>(<port>) <state>`); null for background processes.
 */
function backendDatabase(pid: string): string | null {
  try {
    const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    const m = /^postgres: [^:]+: (\S+) (\S+) (\S+\(\d+\)|\[local\]) /.exec(title);
    return m ? m[2]! : null;
  } catch {
    return null;
  }
}

const parentPid = (stat: string) => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);

/**
 * CPU of PostgreSQL's processes, and of the descendants of this process outside the server's
 * tree. With `database`, client backends of other databases (other work sharing the server, e.g.
 * test suites) are left out (they count as `other`).
 */
function processesMs(database: string | undefined, serverPid: number | undefined) {
  let postgres = 0;
  const stats = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(entry);
    if (!stat) continue;
    stats.set(Number(entry), stat);
    if (!stat.includes(' (postgres) ')) continue;
    if (database !== undefined) {
      const db = backendDatabase(entry);
      if (db !== null && db !== database) continue;
    }
    postgres += processMs(stat);
  }
  const mine = new Set([process.pid]);
  let children = 0;
  // Parents have lower pids except after pid wrap-around; repeat until nothing new is found.
  for (let found = true; found; ) {
    found = false;
    for (const [pid, stat] of stats) {
      if (mine.has(pid) || pid === serverPid || !mine.has(parentPid(stat))) continue;
      mine.add(pid);
      children += processMs(stat);
      found = true;
    }
  }
  return { postgres, children };
}

/** `database`: count only that database's PostgreSQL backends (and the shared background processes). */
export function cpuSnapshot(serverPid: number | undefined, database?: string): CpuSnapshot | null {
  if (process.platform !== 'linux') return null;
  try {
    const fields = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]!
      .trim()
      .split(/\s+/)
      .slice(1, 9)
      .map(Number);
    const total = fields.reduce((a, b) => a + b, 0);
    const idle = fields[3]! + fields[4]!;
    const usage = process.cpuUsage();
    const serverStat = serverPid === undefined ? null : readStat(serverPid);
    const others = processesMs(database, serverPid);
    return {
      machineBusyMs: (total - idle) * msPerTick(),
      machineTotalMs: total * msPerTick(),
      stealMs: fields[7]! * msPerTick(),
      serverMs: serverStat ? processMs(serverStat) : 0,
      loadGeneratorMs: (usage.user + usage.system) / 1000,
      postgresMs: others.postgres,
      childrenMs: others.children,
    };
  } catch {
    return null;
  }
}

export function cpuSplit(a: CpuSnapshot | null, b: CpuSnapshot | null, charges: number): CpuSplit | null {
  if (!a || !b || charges <= 0) return null;
  const per = (ms: number) => Math.round((ms / charges) * 1000) / 1000;
  const busy = b.machineBusyMs - a.machineBusyMs;
  const server = b.serverMs - a.serverMs;
  const loadGenerator = b.loadGeneratorMs - a.loadGeneratorMs;
  // Backends that exited during the run are missed; ones started during it count in full.
  const postgres = Math.max(0, b.postgresMs - a.postgresMs);
  const children = Math.max(0, b.childrenMs - a.childrenMs);
  return {
    machineBusyPercent: Math.round((busy / (b.machineTotalMs - a.machineTotalMs)) * 1000) / 10,
    stealPercent: Math.round(((b.stealMs - a.stealMs) / (b.machineTotalMs - a.machineTotalMs)) * 1000) / 10,
    msPerOp: {
      server: per(server),
      loadGenerator: per(loadGenerator),
      postgres: per(postgres),
      children: per(children),
      other: per(Math.max(0, busy - server - loadGenerator - postgres - children)),
      total: per(busy),
    },
  };
}
