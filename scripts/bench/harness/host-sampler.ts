import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';

/**
 * Who had the machine's CPU, tick by tick: the whole machine's states from /proc/stat (steal is
 * time the hypervisor gave this VM's CPUs to someone else) and every process's CPU from
 * /proc/<pid>/stat. Used to ask of a latency burst whether something outside the bench (another
 * tenant of the host, a service on this machine, the kernel's own threads) took the CPU at that
 * moment, or the bench's own processes did.
 */
export interface HostTick {
  /** performance.now() when the tick was read, and the time since the tick before (timers drift under load). */
  at: number;
  spanMs: number;
  /** Machine-wide CPU over the tick, in ms (both cores together). */
  busy: number;
  steal: number;
  iowait: number;
  /**
   * Page-cache pages read back from disk after the kernel evicted them (`workingset_refault_file`)
   * and major faults (`pgmajfault`), machine-wide, over the tick: a process waiting on either is
   * stalled without using CPU.
   */
  refaults: number;
  majorFaults: number;
  /** Processes first seen in this tick, by group name (a new database connection shows here). */
  started: string[];
  /** CPU ms over the tick by process group (see `groupOf`), only groups that used any. */
  groups: Map<string, number>;
}

const TICK_MS = 10; // USER_HZ is 100 on Linux: /proc counts in 10 ms ticks.

interface ProcSample {
  machine: { busy: number; steal: number; iowait: number; refaults: number; majorFaults: number };
  byPid: Map<number, { comm: string; cpu: number }>;
}

function readMachine(): ProcSample['machine'] {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  const [user, nice, system, , iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  const vmstat = readFileSync('/proc/vmstat', 'utf8');
  const counter = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(vmstat)?.[1] ?? 0);
  return {
    busy: (user! + nice! + system! + irq! + softirq!) * TICK_MS,
    steal: (steal ?? 0) * TICK_MS,
    iowait: iowait! * TICK_MS,
    refaults: counter('workingset_refault_file'),
    majorFaults: counter('pgmajfault'),
  };
}

function readProcesses(): ProcSample['byPid'] {
  const byPid = new Map<number, { comm: string; cpu: number }>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // comm is in parentheses and may itself hold spaces or parentheses: split after the last ')'.
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const fields = stat.slice(close + 2).split(' ');
      byPid.set(pid, { comm, cpu: (Number(fields[11]) + Number(fields[12])) * TICK_MS });
    } catch {
      // The process exited between the listing and the read.
    }
  }
  return byPid;
}

/**
 * A PostgreSQL process's name from its process title: `pg walwriter`, `pg checkpointer`... for the
 * server's own processes, `pg backend <pid>` for a client's backend (whose title also names its
 * database, client address and current command), so that one busy backend stands out.
 */
export function postgresProcessName(pid: number): string {
  try {
    const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
    const own = /^postgres: ([a-z][a-z ]*[a-z])$/.exec(title);
    return own ? `pg ${own[1]}` : `pg backend ${pid}`;
  } catch {
    return `pg backend ${pid}`;
  }
}

/**
 * Samples the host every `intervalMs` until stopped. `groupOf` names a process's group (the
 * gateway, the load generator, PostgreSQL...); kernel threads and other processes are grouped by
 * their command name with digits and slashes trimmed (`kworker/1:1H` → `kworker`).
 */
export function startHostSampler(options: {
  intervalMs: number;
  groupOf: (pid: number, comm: string) => string | undefined;
}): { stop: () => HostTick[] } {
  const ticks: HostTick[] = [];
  let previous: ProcSample = { machine: readMachine(), byPid: readProcesses() };
  let previousAt = performance.now();
  // Named once per process: a name may take a read of its own (a PostgreSQL process's title).
  const names = new Map<number, string>();
  const group = (pid: number, comm: string) => {
    let name = names.get(pid);
    if (name === undefined) {
      name = options.groupOf(pid, comm) ?? comm.replace(/[/:].*$/, '').replace(/[\d.]+$/, '');
      names.set(pid, name);
    }
    return name;
  };
  const timer = setInterval(() => {
    const now: ProcSample = { machine: readMachine(), byPid: readProcesses() };
    const groups = new Map<string, number>();
    const started: string[] = [];
    for (const [pid, { comm }] of now.byPid) if (!previous.byPid.has(pid)) started.push(group(pid, comm));
    for (const [pid, { comm, cpu }] of now.byPid) {
      const used = cpu - (previous.byPid.get(pid)?.cpu ?? cpu);
      if (used <= 0) continue;
      const name = group(pid, comm);
      groups.set(name, (groups.get(name) ?? 0) + used);
    }
    const at = performance.now();
    ticks.push({
      at,
      spanMs: at - previousAt,
      busy: now.machine.busy - previous.machine.busy,
      steal: now.machine.steal - previous.machine.steal,
      iowait: now.machine.iowait - previous.machine.iowait,
      refaults: now.machine.refaults - previous.machine.refaults,
      majorFaults: now.machine.majorFaults - previous.machine.majorFaults,
      started,
      groups,
    });
    previous = now;
    previousAt = at;
  }, options.intervalMs);
  return {
    stop: () => {
      clearInterval(timer);
      return ticks;
    },
  };
}

/**
 * What the host did between two moments (performance.now() values): machine busy, steal and
 * iowait as a share of all cores' time, and the groups that used the most CPU, in ms. A tick
 * counts when its interval overlaps the window.
 */
export function describeHost(ticks: readonly HostTick[], from: number, to: number): string {
  const inside = ticks.filter((t) => t.at > from && t.at - t.spanMs < to);
  if (inside.length === 0) return 'no host samples';
  // Every core of the machine: not availableParallelism(), which is this process's affinity (the
  // load generator is pinned to one core).
  const span = inside.reduce((total, t) => total + t.spanMs, 0) * cpus().length;
  const sum = (pick: (t: HostTick) => number) => inside.reduce((total, t) => total + pick(t), 0);
  const groups = new Map<string, number>();
  for (const t of inside) for (const [name, ms] of t.groups) groups.set(name, (groups.get(name) ?? 0) + ms);
  const top = [...groups]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([name, ms]) => `${name} ${Math.round(ms)}`)
    .join(', ');
  const postgres = [...groups].filter(([name]) => name.startsWith('pg ')).reduce((total, [, ms]) => total + ms, 0);
  const pct = (ms: number) => `${Math.round((100 * ms) / span)} %`;
  const started = inside.flatMap((t) => t.started);
  const news = started.length > 0 ? `; processes started: ${started.join(', ')}` : '';
  return `busy ${pct(sum((t) => t.busy))}, steal ${pct(sum((t) => t.steal))}, iowait ${pct(sum((t) => t.iowait))}, page-cache refaults ${sum((t) => t.refaults)}, major faults ${sum((t) => t.majorFaults)}; CPU ms: PostgreSQL in all ${Math.round(postgres)}; ${top}${news}`;
}
