/**
 * Which filesystem a path lives on, from /proc/self/mountinfo (Linux): the mount whose mount point is the longest
 * prefix of the path. Elsewhere (or when /proc is not mounted) statfs' type number still tells the common
 * network filesystems apart.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface MountInfo {
  mountPoint: string;
  fsType: string;
  source: string;
}

/**
 * Filesystem types on which SQLite's file locks and the WAL's shared memory are not reliable (SQLite's own
 * advice: "WAL does not work over a network filesystem"). FUSE types are named `fuse.<name>`.
 */
const NETWORK_FS = new Set([
  'nfs',
  'nfs4',
  'cifs',
  'smb3',
  'smbfs',
  'ncpfs',
  '9p',
  'afs',
  'ceph',
  'glusterfs',
  'lustre',
  'gfs2',
  'ocfs2',
  'davfs',
  'fuse.sshfs',
  'sshfs',
  'fuse.glusterfs',
  'fuse.cephfs',
  'fuse.s3fs',
  'fuse.rclone',
  'fuse.gcsfuse',
  'fuse.davfs2',
  'fuse.juicefs',
]);

/** statfs f_type magic numbers of network filesystems (linux/magic.h), for when mountinfo cannot be read. */
const NETWORK_MAGIC = new Map<number, string>([
  [0x6969, 'nfs'],
  [0xff534d42, 'cifs'],
  [0xfe534d42, 'smb2'],
  [0x517b, 'smbfs'],
  [0x01021997, '9p'],
  [0x00c36400, 'ceph'],
  [0x5346414f, 'afs'],
]);

export function isNetworkFs(fsType: string): boolean {
  return NETWORK_FS.has(fsType) || fsType.startsWith('nfs');
}

/** `\040` and friends: mountinfo escapes spaces, tabs, newlines and backslashes in paths as octal. */
function unescapeOctal(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

export function parseMountInfo(text: string): MountInfo[] {
  const mounts: MountInfo[] = [];
  for (const line of text.split('\n')) {
    const sep = line.indexOf(' - ');
    if (sep < 0) continue;
    const before = line.slice(0, sep).split(' ');
    const after = line.slice(sep + 3).split(' ');
    if (before.length < 5 || after.length < 2) continue;
    mounts.push({ mountPoint: unescapeOctal(before[4]), fsType: after[0], source: unescapeOctal(after[1]) });
  }
  return mounts;
}

/** The mount holding `target` (an absolute path); later lines win for the same mount point (they are on top). */
export function mountOf(target: string, mounts: MountInfo[]): MountInfo | undefined {
  let best: MountInfo | undefined;
  for (const m of mounts) {
    const inside = m.mountPoint === '/' || target === m.mountPoint || target.startsWith(`${m.mountPoint}/`);
    if (inside && (!best || m.mountPoint.length >= best.mountPoint.length)) best = m;
  }
  return best;
}

/** The deepest existing directory on the way to `file` (the store's file may not exist yet), resolved. */
export function existingDir(file: string): string {
  let dir = path.dirname(path.resolve(file));
  while (!fs.existsSync(dir) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return fs.realpathSync(dir);
}

/** The filesystem under `file`: from mountinfo when readable, else statfs' type number (network ones only). */
export function filesystemOf(file: string, mountinfo = '/proc/self/mountinfo'): { fsType: string; mountPoint?: string; source?: string } | null {
  const dir = existingDir(file);
  try {
    const mount = mountOf(dir, parseMountInfo(fs.readFileSync(mountinfo, 'utf8')));
    if (mount) return mount;
  } catch {
    // Not Linux, or /proc not mounted: fall through to statfs.
  }
  const type = fs.statfsSync(dir).type;
  const name = NETWORK_MAGIC.get(type);
  return name ? { fsType: name } : null;
}
