/**
 * execute_code in a worker process: the backend is found once at start-up (detect.ts; when there is none, one log
 * line says why and the tool is not offered), and each turn gets its own tool, bound to the session's work dir and
 * to the files the user sent in that turn (fetched through the platform only when code first runs).
 */
import type { OutboundFileLimits, Tool } from '@herald/agent-core';
import type { Attachment, PlatformFiles } from '@herald/adapters';
import type { Logger } from '../../support/logger.js';
import { sandboxSettingsOf, type SandboxConfig } from './config.js';
import { describeDetection, detectSandbox, sandboxHealth, type SandboxDetection } from './detect.js';
import { turnInputFiles, type InputLimits } from './inputs.js';
import { createExecuteCodeTool, executeCodeDescription } from './tool.js';
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

interface CodeTurn {
  sessionId: string;
  /** The turn's messages, in order (more than one when pending messages were merged). */
  messages: readonly SentFiles[];
  signal: AbortSignal;
}

export interface CodeTools {
  forTurn(turn: CodeTurn): Tool;
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

/** The per-turn execute_code; null when there is no backend (the tool is then not offered). */
export function createCodeTools(deps: CodeToolsDeps): CodeTools | null {
  const backend = deps.detection?.backend;
  if (!backend) return null;
  const { dir, limits } = sandboxSettingsOf(deps.config);
  // The same for every turn; only the work dir and the user's files are the turn's own.
  const description = executeCodeDescription(limits);
  return {
    forTurn: (turn) =>
      createExecuteCodeTool({
        backend,
        workDir: sessionWorkDir(dir, turn.sessionId),
        limits,
        description,
        fileLimits: deps.fileLimits,
        inputFiles: () => inputsOf(turn, deps),
      }),
  };
}

/** One conversation's messages come from one platform account: its files are fetched there, numbered across the turn. */
function inputsOf(turn: CodeTurn, deps: CodeToolsDeps) {
  const first = turn.messages[0];
  const attachments = turn.messages.flatMap((m) => m.attachments ?? []);
  if (!first || attachments.length === 0) return Promise.resolve([]);
  return turnInputFiles(attachments, deps.files(first.platform, first.account), deps.inputLimits, turn.signal);
}
