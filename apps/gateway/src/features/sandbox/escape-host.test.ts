/**
 * Escape attempts from inside the bubblewrap sandbox, against the host: the network (Redis and PostgreSQL on the
 * host's loopback, DNS, the internet), the gateway's environment and secrets, host files, writes outside the work
 * dir (system folders, the host's /tmp, symlinks, `..`, a forged files channel), another conversation's files,
 * and ptrace. Each must be refused, with the host checked from outside, not only the sandbox's word for it.
 */
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { existsSync } from 'node:fs';
import { lstat, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionWorkDir } from './work-dir.js';
import type { ToolContext } from '@herald/agent-core';
import { gatewayBackend, runner, sandboxRoot, testSandboxConfig } from './test-support.js';
import { createCodeTools } from './wiring.js';

const root = sandboxRoot();
// The backend as a worker gets it at start-up (the gateway's own detection), not one built by hand.
const backend = gatewayBackend('bubblewrap', root);
const run = runner(backend, root);
const SECRET = `sk-canary-${randomBytes(12).toString('hex')}`;

function hostPortAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port }, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}

const TRY_CONNECT = `
import socket, sys
for host, port in [('127.0.0.1', 6379), ('127.0.0.1', 5432), ('1.1.1.1', 53)]:
    try:
        socket.create_connection((host, port), timeout=3).close()
        print('CONNECTED', host, port)
    except OSError as e:
        print('refused', host, port, e.__class__.__name__)
try:
    print('RESOLVED', socket.getaddrinfo('example.com', 443))
except OSError as e:
    print('no dns', e.__class__.__name__)
`;

describe('escape attempts against the host (bubblewrap)', () => {
  beforeAll(() => {
    process.env.HERALD_TEST_CANARY_SECRET = SECRET;
  });
  afterAll(() => {
    delete process.env.HERALD_TEST_CANARY_SECRET;
  });

  it('cannot reach Redis, PostgreSQL, DNS or the internet', async () => {
    // The ports answer on the host, so a refusal inside means the sandbox has no way to them.
    expect(await hostPortAnswers(6379)).toBe(true);
    expect(await hostPortAnswers(5432)).toBe(true);
    const r = await run('python', TRY_CONNECT);
    expect(r.stdout).not.toMatch(/CONNECTED|RESOLVED/);
    expect(r.stdout).toMatch(/refused 127\.0\.0\.1 6379/);
    expect(r.stdout).toMatch(/refused 127\.0\.0\.1 5432/);
    expect(r.stdout).toMatch(/refused 1\.1\.1\.1 53/);
    expect(r.stdout).toMatch(/no dns/);
  });

  it("cannot read the gateway's environment: not its own, not /proc/1/environ, not any /proc/*/environ", async () => {
    const r = await run(
      'shell',
      `env; cat /proc/self/environ /proc/1/environ /proc/*/environ /proc/${process.pid}/environ 2>&1; tr '\\0' '\\n' < /proc/1/environ`,
    );
    expect(r.stdout + r.stderr).not.toContain(SECRET);
    expect(r.stdout).not.toMatch(/HERALD_|REDIS_URL|OPENAI_API_KEY|ANTHROPIC_API_KEY/);
  });

  it('cannot see host files: a file next to the sandbox root, /root, the gateway process', async () => {
    const outside = join(root.path, 'host-secret.txt');
    await writeFile(outside, SECRET, { mode: 0o644 });
    const r = await run('shell', `cat ${outside}; ls /root; ls ${root.path}; cat /proc/${process.pid}/cmdline; ls /home /etc; cat /etc/shadow /etc/passwd`);
    expect(r.stdout + r.stderr).not.toContain(SECRET);
    expect(r.stderr).toMatch(/host-secret\.txt: No such file or directory/);
    expect(r.stderr).toMatch(/cannot access '\/root': No such file or directory/);
    // /etc holds only what programs need to start (the loader's cache, certificates, the time zone).
    expect(r.stdout).not.toMatch(/passwd|shadow|hostname/);
  });

  it('cannot write to system folders, the host /tmp, or through symlinks and ..', async () => {
    const marker = `pwned-${randomBytes(6).toString('hex')}`;
    const hostTarget = join(root.path, marker);
    const r = await run(
      'shell',
      [
        `for d in /usr /usr/bin /bin /etc /proc/sys /dev / /.run /.session; do echo x > "$d/${marker}" 2>/dev/null && echo "WROTE $d"; done`,
        `echo x > /tmp/${marker} && echo "tmp is the sandbox's own"`,
        `ln -s ${hostTarget} link && echo x > link 2>/dev/null && echo "WROTE through link"`,
        `ln -s /usr/lib usrlink && echo x > usrlink/${marker} 2>/dev/null && echo "WROTE through usrlink"`,
        `echo x > ../../../..${hostTarget} 2>/dev/null && echo "WROTE via dotdot"`,
        `mount -o remount,rw /usr 2>/dev/null && echo REMOUNTED`,
      ].join('\n'),
    );
    expect(r.stdout).not.toMatch(/WROTE|REMOUNTED/);
    expect(r.stdout).toMatch(/tmp is the sandbox's own/);
    expect(existsSync(hostTarget)).toBe(false);
    expect(existsSync(`/tmp/${marker}`)).toBe(false);
    expect(existsSync(`/usr/lib/${marker}`)).toBe(false);
    // The symlinks the code left are not kept: only regular files come back.
    const saved = join(sessionWorkDir(root.path, 'session-a'), 'files');
    for (const name of await readdir(saved)) expect((await lstat(join(saved, name))).isSymbolicLink()).toBe(false);
  });

  it("cannot reach the gateway's end of the files channel, nor any descriptor the gateway inherited", async () => {
    // The tar of the work dir goes back on a channel the wrapper holds; the program tries every descriptor it has
    // and every one of its parents' through /proc. (Forged tars are also refused by the reader: tar-files.test.ts.)
    const code = `
import os
reached = []
for pid in ['self', str(os.getppid()), '1']:
    try:
        fds = os.listdir('/proc/%s/fd' % pid)
    except OSError:
        continue
    for fd in fds:
        if int(fd) <= 2:  # stdin is /dev/null; stdout and stderr are the run's own output
            continue
        try:
            w = os.open('/proc/%s/fd/%s' % (pid, fd), os.O_WRONLY)
            os.write(w, b'x' * 512)
            reached.append('%s/%s' % (pid, fd))
        except OSError:
            pass
print('reached', reached)
`;
    const r = await run('python', code, { session: 'channel' });
    expect(r.stdout).toBe('reached []\n');
    expect(r.files).toEqual([]);
  });

  it("cannot see another conversation's files", async () => {
    const mine = await run('shell', `echo ${SECRET} > diary.txt`, { session: 'alice' });
    expect(mine.files.map((f) => f.path)).toEqual(['diary.txt']);
    // The pattern is put together at run time, so the script itself (in /.run) does not hold it.
    const [head, tail] = [SECRET.slice(0, 10), SECRET.slice(10)];
    const other = await run(
      'shell',
      `cat diary.txt /.session/diary.txt 2>&1; grep -rs "${head}""${tail}" / --exclude-dir=proc --exclude-dir=usr; ls ${sessionWorkDir(root.path, 'alice')}`,
      { session: 'bob' },
    );
    expect(other.stdout).not.toContain(SECRET.slice(3));
  });

  it('cannot ptrace or read the memory of host processes', async () => {
    const code = `
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
for pid in [${process.pid}, ${process.ppid}]:
    rc = libc.ptrace(16, pid, 0, 0)  # PTRACE_ATTACH
    print('attach', pid, rc, os.strerror(ctypes.get_errno()))
try:
    open('/proc/${process.pid}/mem', 'rb').read(1)
    print('READ MEM')
except OSError as e:
    print('mem', e.__class__.__name__)
`;
    const r = await run('python', code);
    expect(r.stdout).toMatch(new RegExp(`attach ${process.pid} -1`));
    expect(r.stdout).toMatch(new RegExp(`attach ${process.ppid} -1`));
    expect(r.stdout).not.toMatch(/READ MEM/);
  });

  it("the tool a turn gets (the gateway's execute_code, from its start-up detection) is the same closed sandbox", async () => {
    const tools = createCodeTools({
      detection: backend.detection(),
      config: testSandboxConfig('bubblewrap', root.path),
      fileLimits: { maxBytes: 1024 * 1024, types: ['text/*'] },
      inputLimits: { maxFileBytes: 1024, maxTotalBytes: 1024 },
      files: () => {
        throw new Error('this turn has no files');
      },
    });
    const tool = tools?.tool;
    const code = `
import os, socket
print('env', sorted(os.environ))
try:
    socket.create_connection(('127.0.0.1', 6379), timeout=3).close()
    print('CONNECTED')
except OSError:
    print('refused')
`;
    const out = await tool?.execute({ language: 'python', code }, { signal: new AbortController().signal, sessionId: 'tool-path' } as unknown as ToolContext);
    expect(out).toMatch(/^Exit code 0/);
    // The sandbox's own variables and those bash (the wrapper) sets; nothing of the gateway's.
    expect(out).toContain("env ['HOME', 'LANG', 'MPLCONFIGDIR', 'OLDPWD', 'PATH', 'PWD', 'SHLVL', 'XDG_CACHE_HOME', '_']");
    expect(out).toContain('refused');
    expect(out).not.toMatch(/CONNECTED|HERALD_|sk-canary/);
  });
});
