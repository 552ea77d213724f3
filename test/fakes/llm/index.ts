/** Protocol-faithful OpenAI and Anthropic stand-ins on 127.0.0.1, driven through the real SDKs in tests. */
export { startFakeOpenAI, FAKE_OPENAI_CONTEXT_LIMIT } from './openai.js';
export { startFakeAnthropic, FAKE_ANTHROPIC_CONTEXT_LIMIT } from './anthropic.js';
export { startFakeBedrock, type FakeBedrockOptions } from './bedrock.js';
export type {
  ErrorKind,
  FakeAnthropicOptions,
  FakeLLM,
  FakeOpenAIOptions,
  FakeOptions,
  RecordedRequest,
  Responder,
  Step,
  StepError,
  StepFinish,
  StepToolCall,
  StepUsage,
} from './types.js';
