import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';

/** CPU time (user + system) a process has used, in microseconds, from /proc (Linux). */
export function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime
  return (ticks * 1_000_000) / 100; // USER_HZ is 100 on Linux
}

/** Resident set size in MiB. */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(status.match(/VmRSS:\s+(\d+)/)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

/** Peak resident set size (VmHWM) in MiB. */
export function peakRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(status.match(/VmHWM:\s+(\d+)/)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

/** The 1/5/15-minute load averages, as the figures' context: on a shared machine they explain noise. */
export function loadAverage(): string {
  return loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ');
}
