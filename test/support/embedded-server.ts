import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The postmaster of the embedded PostgreSQL in `dataDir`, from its postmaster.pid. */
export function postmasterPid(dataDir: string): number {
  return Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
}

/** The embedded PostgreSQL of `dataDir`: its postmaster and every process it started. */
export function clusterProcesses(dataDir: string): number[] {
  const postmaster = postmasterPid(dataDir);
  const children = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
      } catch {
        return false;
      }
    })
    .map(Number);
  return [postmaster, ...children];
}
