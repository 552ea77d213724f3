/**
 * How each language runs inside the sandbox, and the small bash script every run goes through: it restores the
 * session's earlier files into the (fresh, sized) work dir, runs the program with no stdin and without the files
 * channel, and — for bubblewrap, whose tmpfs vanishes with the run — streams the work dir out as a tar on fd 3.
 */
import type { SandboxLanguage } from './types.js';

/** Inside the sandbox: the work dir, where the session's files are restored from, the run's script and code. */
export const WORK = '/work';
export const SESSION_FILES = '/.session';
export const RUN_DIR = '/.run';
export const INPUTS = 'inputs';

const PROGRAMS: Record<SandboxLanguage, { file: string; command: string[] }> = {
  // -I: isolated mode (no user site-packages, no PYTHON* variables); -B: no __pycache__ in the work dir; -u: what
  // was printed before a kill at the time limit still reaches the model.
  python: { file: 'main.py', command: ['python3', '-I', '-B', '-u'] },
  javascript: { file: 'main.js', command: ['node'] },
  shell: { file: 'main.sh', command: ['bash'] },
};

export function programFile(language: SandboxLanguage): string {
  return PROGRAMS[language].file;
}

/** The argv of the run inside the sandbox: the wrapper script, then the program. */
export function runArgv(language: SandboxLanguage): string[] {
  const p = PROGRAMS[language];
  return ['/bin/bash', `${RUN_DIR}/run.sh`, ...p.command, `${RUN_DIR}/${p.file}`];
}

/** The tar of the work dir (the user's inputs left out), as a command; the Docker backend runs it on its own. */
export const COLLECT_ARGV = ['tar', '-C', WORK, `--exclude=./${INPUTS}`, '-cf', '-', '.'];

/** The wrapper script; `collectOnFd3` appends the work dir's tar on fd 3 once the program is done. */
export function wrapperScript(collectOnFd3: boolean): string {
  return [
    '#!/bin/bash',
    // Descriptors the gateway inherited from whoever started it would pass through bwrap: close all but stdio and
    // the files channel (the glob is expanded before the loop; closing its own, gone, descriptor is no error). No
    // redirection on the loop: bash would park stderr on a descriptor above 3, and the loop would close it.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: bash parameter expansion, not a template
    'for fd in /proc/self/fd/*; do fd=${fd##*/}; if [ "$fd" -gt 3 ]; then eval "exec $fd>&-"; fi; done',
    `if [ -d ${SESSION_FILES} ]; then cp -R ${SESSION_FILES}/. ${WORK}/ 2>/dev/null; fi`,
    `cd ${WORK} || exit 111`,
    // The program gets neither stdin nor the files channel (bash keeps its own copy close-on-exec; the channel is a
    // socket, which cannot be reopened through /proc).
    '"$@" </dev/null 3>&-',
    'status=$?',
    ...(collectOnFd3 ? [`${COLLECT_ARGV.join(' ')} >&3 2>/dev/null`] : []),
    'exit $status',
    '',
  ].join('\n');
}

/** The environment of the program: nothing of the gateway's. */
export const SANDBOX_ENV: Readonly<Record<string, string>> = {
  PATH: '/usr/local/bin:/usr/bin:/bin',
  HOME: '/tmp',
  LANG: 'C.UTF-8',
  // Caches go to /tmp, not the work dir (whose new files are sent to the chat).
  MPLCONFIGDIR: '/tmp',
  XDG_CACHE_HOME: '/tmp/.cache',
};
