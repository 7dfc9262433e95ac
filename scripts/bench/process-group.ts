import { readdirSync, readFileSync } from 'node:fs';

/** One process as /proc (Linux) shows it. */
export interface ProcessInfo {
  pid: number;
  parent: number;
  group: number;
  /** The executable's name (at most 15 characters, as the kernel keeps it). */
  name: string;
  rssKiB: number;
  /** CPU (user + system) of the process and of its children it has waited for, in microseconds. */
  cpuMicros: number;
}

/** Every process this user can read, skipping those that ended while being read. */
export function processes(): ProcessInfo[] {
  const found: ProcessInfo[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      // Fields after the name: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
      // utime stime cutime cstime … rss (pages) is the 22nd of them.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
      found.push({
        pid: Number(entry),
        parent: Number(fields[1]),
        group: Number(fields[2]),
        name,
        rssKiB: Number(fields[21]) * 4, // 4 KiB pages
        cpuMicros: (ticks * 1_000_000) / 100, // USER_HZ is 100 on Linux
      });
    } catch {
      // Gone between the listing and the read.
    }
  }
  return found;
}

/** The processes of a process group (a child spawned `detached` leads a group of its own id). */
export function processGroup(group: number): ProcessInfo[] {
  return processes().filter((p) => p.group === group);
}

/** The direct children of a process. */
export function childrenOf(pid: number): ProcessInfo[] {
  return processes().filter((p) => p.parent === pid);
}

/** Resident memory of a whole process group, in MiB: what the machine holds for one `npm start`. */
export function groupRssMiB(group: number): number {
  return Math.round(processGroup(group).reduce((sum, p) => sum + p.rssKiB, 0) / 1024);
}
