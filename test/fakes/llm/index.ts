/** Protocol-faithful OpenAI and Anthropic stand-ins on 127.0.0.1, driven through the real SDKs in tests. */
export { startFakeOpenAI, FAKE_OPENAI_CONTEXT_LIMIT, type FakeOpenAI } from './openai.js';
export type { TranscriptionRecord, Transcriber } from './transcriptions.js';
export { defaultTranscript, transcriptionBilling } from './transcriptions.js';
export { startFakeAnthropic, FAKE_ANTHROPIC_CONTEXT_LIMIT } from './anthropic.js';
export { imagesOf, sniffImageType, type SeenImage } from './images.js';
export { startFakeBedrock, type FakeBedrockOptions } from './bedrock.js';
export { SPEECH_MAX_INPUT } from './speech.js';
export type {
  ErrorKind,
  FakeAnthropicOptions,
  FakeLLM,
  FakeOpenAIOptions,
  FakeOptions,
  FakeSpeech,
  RecordedRequest,
  Responder,
  Step,
  StepError,
  StepFinish,
  StepToolCall,
  StepUsage,
} from './types.js';
