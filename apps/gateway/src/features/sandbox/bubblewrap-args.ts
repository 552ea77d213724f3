/**
 * The command line of a bubblewrap run, built to the recipe measured in DESIGN.md ("bubblewrap as a sandbox"):
 *
 *   setpriv  — the run gets its own unprivileged host uid: RLIMIT_NPROC means nothing for uid 0, and a uid of its
 *              own keeps one run's fork bomb from starving another's. No capabilities, no new privileges.
 *   prlimit  — CPU seconds, address space, processes, file size, open files, no core dumps (inherited by all).
 *   bwrap    — every namespace (no network unless allowed: only the sandbox's own loopback), dies with the
 *              gateway, a new session (no TIOCSTI into the gateway's terminal), all capabilities dropped, no
 *              nested user namespaces; read-only /usr and a few files of /etc; sized tmpfs for /tmp, /dev/shm
 *              and the work dir; the root and /dev read-only.
 *
 * The environment is the caller's to set (spawn with SANDBOX_ENV only): bwrap's own init, pid 1 inside, keeps the
 * environment bwrap was started with, so the gateway's must never reach it.
 */
import { existsSync, lstatSync } from 'node:fs';
import { INPUTS, RUN_DIR, SESSION_FILES, WORK, runArgv } from './languages.js';
import type { RunDirs } from './work-dir.js';
import type { SandboxLanguage, SandboxLimits } from './types.js';

export interface BwrapTools {
  setpriv: string;
  prlimit: string;
  bwrap: string;
}

/** The uid (and gid) a run has on the host and inside. */
const SANDBOX_INNER_UID = 65534;

/** /etc entries a program needs (the dynamic loader, certificates, time zone); the rest of /etc stays out. */
const ETC_FILES = ['/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d', '/etc/alternatives', '/etc/ssl', '/etc/ca-certificates', '/etc/localtime'];
/** With network allowed, name resolution too. */
const ETC_NETWORK = ['/etc/resolv.conf', '/etc/hosts', '/etc/nsswitch.conf', '/etc/gai.conf'];
/** Merged-/usr systems link these into /usr; older ones have real directories. */
const TOP_DIRS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

function systemBinds(network: boolean): string[] {
  const args = ['--ro-bind', '/usr', '/usr'];
  for (const dir of TOP_DIRS) {
    if (!existsSync(dir)) continue;
    const stat = lstatSync(dir);
    if (stat.isSymbolicLink()) args.push('--symlink', `usr${dir}`, dir);
    else args.push('--ro-bind', dir, dir);
  }
  for (const f of [...ETC_FILES, ...(network ? ETC_NETWORK : [])]) args.push('--ro-bind-try', f, f);
  return args;
}

export function bwrapArgv(tools: BwrapTools, hostUid: number, dirs: RunDirs, language: SandboxLanguage, limits: SandboxLimits): string[] {
  const size = String(limits.diskBytes);
  return [
    tools.setpriv,
    `--reuid=${hostUid}`,
    `--regid=${hostUid}`,
    '--clear-groups',
    '--inh-caps=-all',
    '--bounding-set=-all',
    '--no-new-privs',
    '--',
    tools.prlimit,
    `--cpu=${limits.cpuSeconds}`,
    `--as=${limits.memoryBytes}`,
    `--nproc=${limits.processes}`,
    `--fsize=${limits.diskBytes}`,
    '--nofile=256',
    '--core=0',
    '--',
    tools.bwrap,
    '--unshare-all',
    '--unshare-user',
    ...(limits.network ? ['--share-net'] : []),
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--disable-userns',
    '--hostname',
    'sandbox',
    ...systemBinds(limits.network),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--size',
    size,
    '--tmpfs',
    '/dev/shm',
    '--remount-ro',
    '/dev',
    '--size',
    size,
    '--tmpfs',
    '/tmp',
    '--size',
    size,
    '--tmpfs',
    WORK,
    '--ro-bind',
    dirs.files,
    SESSION_FILES,
    '--ro-bind',
    dirs.inputs,
    `${WORK}/${INPUTS}`,
    '--ro-bind',
    dirs.run,
    RUN_DIR,
    '--remount-ro',
    '/',
    '--chdir',
    WORK,
    '--uid',
    String(SANDBOX_INNER_UID),
    '--gid',
    String(SANDBOX_INNER_UID),
    '--',
    ...runArgv(language),
  ];
}
