/**
 * execute_code in a worker process: the backend is found once at start-up (detect.ts; when there is none, one log
 * line says why and the tool is not offered), and the tool is built once. What is a turn's own comes with each call,
 * in the tool context (turn/tools.ts): the session, whose work dir the code runs in, and the turn's messages, whose
 * files the user sent are fetched through the platform when code first runs in that turn. A turn that runs no code
 * works out nothing here.
 */
import type { OutboundFileLimits, Tool, ToolContext } from '@herald/agent-core';
import type { Attachment, PlatformFiles } from '@herald/adapters';
import type { Logger } from '../../support/logger.js';
import { sandboxSettingsOf, type SandboxConfig } from './config.js';
import { describeDetection, detectSandbox, sandboxHealth, type SandboxDetection } from './detect.js';
import { turnInputFiles, type InputLimits } from './inputs.js';
import type { InputFile } from './types.js';
import { createExecuteCodeTool } from './tool.js';
import { sessionWorkDir } from './work-dir.js';

/** The toolset that offers execute_code (HERALD_TOOLSETS, a profile's toolsets); `full` includes it. */
export const CODE_TOOLSET = 'code';

export function offersCode(toolsets: readonly string[]): boolean {
  return toolsets.includes(CODE_TOOLSET) || toolsets.includes('full');
}

/**
 * Finds the backend when some profile offers code (each toolset list is one profile's); logs the start-up line.
 * Null when no profile offers it (nothing is tried then).
 */
export async function openSandbox(config: SandboxConfig, toolsets: ReadonlyArray<readonly string[]>, log: Logger): Promise<SandboxDetection | null> {
  if (!toolsets.some(offersCode)) {
    log.info(`execute_code not offered: no profile's toolsets include ${CODE_TOOLSET} (HERALD_TOOLSETS)`);
    return null;
  }
  const detection = await detectSandbox(sandboxSettingsOf(config));
  const line = describeDetection(detection);
  if (detection.backend) log.info({ sandbox: sandboxHealth(detection) }, line);
  else log.warn({ sandbox: sandboxHealth(detection) }, line);
  return detection;
}

/** What a turn's messages carry that the code may read: their files, and the platform to fetch them from. */
interface SentFiles {
  platform: string;
  account?: string;
  attachments?: readonly Attachment[];
}

/** The turn's part of the tool context (under CODE_TURN_CONTEXT), one object per turn: its inputs are fetched once. */
export interface CodeTurn {
  /** The turn's messages, in order (more than one when pending messages were merged). */
  messages: readonly SentFiles[];
}

/** The tool-context key a turn puts its CodeTurn under (next to `sessionId`, whose work dir the code runs in). */
export const CODE_TURN_CONTEXT = 'codeTurn';

export interface CodeTools {
  /** execute_code, the same for every turn. */
  readonly tool: Tool;
}

export interface CodeToolsDeps {
  detection: SandboxDetection | null;
  config: SandboxConfig;
  /** What may be sent to the chat: the same limits as send_file. */
  fileLimits: OutboundFileLimits;
  /** The user's files the code may read: per file and per turn (HERALD_MEDIA_MAX_FILE_MB, …_MESSAGE_MB). */
  inputLimits: InputLimits;
  /** Each platform's downloads (features/media/services.ts). */
  files: (platform: string, account?: string) => PlatformFiles;
}

/** execute_code; null when there is no backend (the tool is then not offered). */
export function createCodeTools(deps: CodeToolsDeps): CodeTools | null {
  const backend = deps.detection?.backend;
  if (!backend) return null;
  const { dir, limits } = sandboxSettingsOf(deps.config);
  // Each turn's files, fetched when code first runs in it (keyed by the turn's CodeTurn).
  const inputs = new WeakMap<CodeTurn, Promise<readonly InputFile[]>>();
  const tool = createExecuteCodeTool({
    backend,
    workDir: (ctx) => sessionWorkDir(dir, sessionIdOf(ctx)),
    limits,
    fileLimits: deps.fileLimits,
    inputFiles: (ctx) => {
      const turn = ctx[CODE_TURN_CONTEXT] as CodeTurn | undefined;
      if (!turn) return Promise.resolve([]);
      let files = inputs.get(turn);
      if (!files) inputs.set(turn, (files = inputsOf(turn, deps, ctx.signal)));
      return files;
    },
  });
  return { tool };
}

function sessionIdOf(ctx: ToolContext): string {
  if (typeof ctx.sessionId !== 'string') throw new Error('execute_code runs in a session, and this call names none');
  return ctx.sessionId;
}

/** One conversation's messages come from one platform account: its files are fetched there, numbered across the turn. */
function inputsOf(turn: CodeTurn, deps: CodeToolsDeps, signal: AbortSignal): Promise<readonly InputFile[]> {
  const first = turn.messages[0];
  const attachments = turn.messages.flatMap((m) => m.attachments ?? []);
  if (!first || attachments.length === 0) return Promise.resolve([]);
  return turnInputFiles(attachments, deps.files(first.platform, first.account), deps.inputLimits, signal);
}
