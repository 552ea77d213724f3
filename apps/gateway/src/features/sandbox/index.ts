/** Sandboxed code execution: the execute_code tool and the backends it runs on (docs/sandbox.md). */
export type { BackendProbe, InputFile, RunRequest, RunResult, SandboxBackend, SandboxBackendName, SandboxLanguage, SandboxLimits, WorkFile } from './types.js';
export { SANDBOX_BACKENDS, SANDBOX_LANGUAGES } from './types.js';
export { BubblewrapBackend, findBwrapTools } from './bubblewrap.js';
export { DockerBackend } from './docker.js';
export {
  describeDetection,
  detectSandbox,
  sandboxHealth,
  type SandboxChoice,
  type SandboxHealth,
  type SandboxDetection,
  type SandboxSettings,
} from './detect.js';
export { sandboxSettingsOf, type SandboxConfig } from './config.js';
export { ensureSandboxRoot, sessionWorkDir } from './work-dir.js';
export { EXECUTE_CODE_TOOL, createExecuteCodeTool, type ExecuteCodeToolOptions } from './tool.js';
export { inputFileName, turnInputFiles, type InputLimits } from './inputs.js';
export { CODE_TOOLSET, CODE_TURN_CONTEXT, createCodeTools, offersCode, openSandbox, type CodeTools } from './wiring.js';
