/**
 * The `execute_code` tool: runs Python, JavaScript (Node) or a shell script in the sandbox, in the session's own
 * work dir. What it prints comes back to the model (capped); files it writes there (a chart, a CSV) go to the
 * user with the reply, through the same FileSink and checks as send_file.
 */
import { formatBytes, outboundFile, type FileSink, type OutboundFileLimits, type Tool, type ToolContext } from '@herald/agent-core';
import { SANDBOX_LANGUAGES, type InputFile, type RunResult, type SandboxBackend, type SandboxLanguage, type SandboxLimits } from './types.js';

export const EXECUTE_CODE_TOOL = 'execute_code';

export interface ExecuteCodeToolOptions {
  backend: SandboxBackend;
  /**
   * The session's work dir on the host (sessionWorkDir(HERALD_SANDBOX_DIR, sessionId)); a function of the call's
   * context where one tool serves every session (wiring.ts).
   */
  workDir: string | ((ctx: ToolContext) => string);
  limits: SandboxLimits;
  /** What may be sent to the chat (HERALD_OUTBOUND_FILE_MAX_MB, HERALD_OUTBOUND_FILE_TYPES). */
  fileLimits: OutboundFileLimits;
  /** The files the user sent in the call's turn, fetched when code first runs (the caller keeps them per turn). */
  inputFiles?: (ctx: ToolContext) => Promise<readonly InputFile[]>;
}

function sinkOf(ctx: ToolContext): FileSink | null {
  const f = ctx.files as Partial<FileSink> | undefined;
  return f && typeof f.add === 'function' ? (f as FileSink) : null;
}

/** What the model is told of the tool: it depends on the limits only. */
function executeCodeDescription(limits: SandboxLimits): string {
  return (
    'Run a short Python 3, JavaScript (Node.js) or bash program in an isolated sandbox and get its output. ' +
    "The working directory is this conversation's own and keeps its files between runs; files the user sent are " +
    'in inputs/ (read-only). Every new or changed file the program writes in the working directory (a chart as ' +
    `PNG, a CSV) is sent to the user after your reply. ${limits.network ? '' : 'There is no network. '}` +
    `Limits: ${Math.round(limits.wallMs / 1000)} s, ${formatBytes(limits.memoryBytes)} memory per process, ` +
    `${formatBytes(limits.diskBytes)} of files, ${formatBytes(limits.outputBytes)} of output. Only the standard library and what the host has installed.`
  );
}

function outcomeLine(r: RunResult, limits: SandboxLimits): string {
  const took = `${(r.durationMs / 1000).toFixed(1)} s`;
  if (r.timedOut) return `Stopped: the run passed its time limit of ${Math.round(limits.wallMs / 1000)} s and all its processes were killed (${took}).`;
  if (r.aborted) return 'Stopped: the turn was interrupted.';
  if (r.outputCapped && r.exitCode === null)
    return `Stopped: the output passed ${formatBytes(limits.outputBytes)}; it is cut below and the run's files were not kept.`;
  if (r.exitCode === null) return `The program was killed by ${r.signal ?? 'a signal'} (a CPU, memory or process limit) after ${took}.`;
  // The wrapper shell reports a program killed by signal N as 128 + N (SIGXCPU, SIGKILL, SIGXFSZ: a limit).
  if (r.exitCode > 128 && r.exitCode < 160)
    return `Exit code ${r.exitCode}: the program was killed by signal ${r.exitCode - 128} (a CPU, memory, file-size or process limit) after ${took}.`;
  return `Exit code ${r.exitCode} (${took}).`;
}

/** Hands the run's files to the chat; one line per file sent or refused. */
function sendFiles(r: RunResult, ctx: ToolContext, limits: OutboundFileLimits): string[] {
  if (r.files.length === 0) return [];
  const sink = sinkOf(ctx);
  if (!sink) return [`Files written (kept in the working directory; this conversation cannot receive files): ${r.files.map((f) => f.path).join(', ')}`];
  return r.files.map((f) => {
    try {
      const file = outboundFile(f.data, { name: f.path.split('/').pop() }, limits);
      sink.add(file);
      return `Sent to the user after your reply: ${f.path} (${file.mimeType}, ${formatBytes(file.data.length)}).`;
    } catch (err) {
      return `Not sent: ${f.path}: ${err instanceof Error ? err.message : String(err)}`;
    }
  });
}

function formatRunResult(r: RunResult, ctx: ToolContext, limits: SandboxLimits, fileLimits: OutboundFileLimits): string {
  const parts = [outcomeLine(r, limits)];
  if (r.stdout !== '') parts.push(`stdout:\n${r.stdout}`);
  if (r.stderr !== '') parts.push(`stderr:\n${r.stderr}`);
  if (r.outputCapped && r.exitCode !== null) parts.push(`(output cut at ${formatBytes(limits.outputBytes)})`);
  return [...parts, ...sendFiles(r, ctx, fileLimits)].join('\n');
}

export function createExecuteCodeTool(opts: ExecuteCodeToolOptions): Tool {
  return {
    name: EXECUTE_CODE_TOOL,
    description: executeCodeDescription(opts.limits),
    parameters: {
      type: 'object',
      properties: {
        language: { type: 'string', enum: [...SANDBOX_LANGUAGES], description: 'python, javascript or shell (bash)' },
        code: { type: 'string', description: 'The whole program' },
      },
      required: ['language', 'code'],
    },
    readOnly: false,
    async execute(args, ctx) {
      const language = args.language;
      if (typeof language !== 'string' || !(SANDBOX_LANGUAGES as readonly string[]).includes(language)) {
        throw new Error(`"language" must be one of ${SANDBOX_LANGUAGES.join(', ')}`);
      }
      if (typeof args.code !== 'string' || args.code.trim() === '') throw new Error('"code" is required and must be a non-empty string');
      const result = await opts.backend.run({
        language: language as SandboxLanguage,
        code: args.code,
        workDir: typeof opts.workDir === 'string' ? opts.workDir : opts.workDir(ctx),
        inputFiles: opts.inputFiles ? await opts.inputFiles(ctx) : [],
        limits: opts.limits,
        signal: ctx.signal,
      });
      return formatRunResult(result, ctx, opts.limits, opts.fileLimits);
    },
  };
}
