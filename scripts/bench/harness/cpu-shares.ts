import { readFileSync } from 'node:fs';
import type pg from 'pg';
import { cpuMicros } from './proc.js';

/**
 * Whole-machine busy CPU time in microseconds since boot (/proc/stat: every state but idle and
 * iowait). On a two-core machine shared by the gateway, PostgreSQL and the load generator this is
 * the budget a request draws on, wherever its cost lands.
 */
export function machineBusyMicros(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  const ticks = user! + nice! + system! + irq! + softirq! + (steal ?? 0);
  return (ticks * 1_000_000) / 100; // USER_HZ is 100 on Linux
}

/**
 * CPU time of the PostgreSQL backends serving `client`'s database plus the cluster's own background
 * processes (WAL writer, checkpointer, background writer: the cost of the WAL a request makes), by
 * pid. Read from /proc, so only when PostgreSQL runs on this machine; an empty map otherwise.
 */
export async function postgresCpu(client: pg.Client): Promise<Map<number, number>> {
  const { rows } = await client.query<{ pid: number }>(
    `select pid from pg_stat_activity
     where datname = current_database() or backend_type in ('walwriter', 'checkpointer', 'background writer')`,
  );
  const byPid = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      // A PostgreSQL on another host or in a container has pids that may be unrelated local processes.
      if (!readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith('postgres')) continue;
      byPid.set(pid, cpuMicros(pid));
    } catch {
      // Not on this machine, or the backend has just exited.
    }
  }
  return byPid;
}

/**
 * CPU the PostgreSQL processes used between two samples: a backend started in between counts whole
 * (all its time falls inside), one that exited in between is lost (the pools keep theirs open).
 */
export function postgresCpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let used = 0;
  for (const [pid, micros] of after) used += micros - (before.get(pid) ?? 0);
  return used;
}
