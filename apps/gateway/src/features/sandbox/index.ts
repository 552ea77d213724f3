/**
 * Sandboxed code execution (docs/sandbox.md): what the rest of the gateway uses of it, the execute_code tool's
 * wiring and the backend's health. The backends, their detection and the tool itself are imported only inside
 * this folder.
 */
export { sandboxHealth, type SandboxDetection, type SandboxHealth } from './detect.js';
export { EXECUTE_CODE_TOOL } from './tool.js';
export { CODE_TOOLSET, CODE_TURN_CONTEXT, createCodeTools, offersCode, openSandbox, type CodeTools } from './wiring.js';
