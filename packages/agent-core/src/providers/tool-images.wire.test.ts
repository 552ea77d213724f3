/**
 * A tool that returns an image, through each provider's real SDK client (openai, @anthropic-ai/sdk,
 * @aws-sdk/client-bedrock-runtime) against the stand-ins, which check images as the real APIs do: the request
 * after the tool ran carries the image where that API takes it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { imagesOf, startFakeAnthropic, startFakeBedrock, startFakeOpenAI, type FakeLLM, type RecordedRequest } from '../../../../test/fakes/llm/index.js';
import { useProcessEnv } from '../../../../test/helpers/process-env.js';
import { runConversation } from '../loop/run-conversation.js';
import type { Tool } from '../tools/registry.js';
import { createProvider } from './resolve.js';
import type { ProviderConfig } from './types.js';

const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const NOTE = 'a dot\n\n[image 1: image/png, 70 bytes]';
const screenshot: Tool = {
  name: 'screenshot',
  description: 'Takes a screenshot',
  parameters: { type: 'object', properties: {} },
  readOnly: true,
  execute: async () => ({ content: NOTE, images: [{ mimeType: 'image/png', data: png }] }),
};
const AWS_ENV = { AWS_ACCESS_KEY_ID: 'AKIAFAKEBEDROCK00002', AWS_SECRET_ACCESS_KEY: 'fake-secret', AWS_REGION: 'eu-west-1' } as const;
useProcessEnv(AWS_ENV);

let fake: FakeLLM;
afterEach(async () => {
  await fake.close();
});

/** One turn that calls the tool and then answers; the request sent after the tool ran. */
async function afterTool(cfg: ProviderConfig): Promise<RecordedRequest> {
  fake.script({ toolCalls: [{ id: 'call_shot', name: 'screenshot', arguments: '{}' }] }, { text: 'a dot it is' });
  const result = await runConversation({
    userMessage: 'look',
    history: [],
    systemPrompt: 'You are Herald.',
    provider: createProvider(cfg),
    tools: [screenshot],
  });
  expect(result.error).toBeUndefined();
  expect(result.finalResponse).toBe('a dot it is');
  return fake.requests[1]!;
}

describe('an image returned by a tool, on the wire', () => {
  it('Chat Completions (openai SDK): a user message after the tool message shows it', async () => {
    fake = await startFakeOpenAI({ apiKey: 'sk-test' });
    const { body } = await afterTool({ provider: 'openai', model: 'gpt-4.1-mini', apiKey: 'sk-test', baseUrl: fake.url });
    const messages = body.messages as Array<{ role: string; content: unknown }>;
    expect(messages.slice(-2)).toEqual([
      { role: 'tool', tool_call_id: 'call_shot', content: NOTE },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'The image returned by tool call call_shot (screenshot), in the order its result lists them:' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
        ],
      },
    ]);
  });

  it('Anthropic (@anthropic-ai/sdk): an image block inside the tool_result', async () => {
    fake = await startFakeAnthropic();
    const { body } = await afterTool({ provider: 'anthropic', model: 'claude-haiku-4-5', apiKey: 'sk-ant-test', baseUrl: fake.url });
    expect(imagesOf({ body } as never)).toMatchObject([{ role: 'user', mimeType: 'image/png', toolUseId: 'call_shot', bytes: Buffer.from(png, 'base64') }]);
  });

  it('Responses (openai SDK): input_text and input_image in the function_call_output', async () => {
    fake = await startFakeOpenAI({ apiKey: 'sk-test' });
    const { body } = await afterTool({ provider: 'openai-responses', model: 'gpt-4.1', apiKey: 'sk-test', baseUrl: fake.url });
    const output = (body.input as Array<Record<string, unknown>>).find((i) => i.type === 'function_call_output');
    expect(output?.output).toEqual([
      { type: 'input_text', text: NOTE },
      { type: 'input_image', image_url: `data:image/png;base64,${png}`, detail: 'auto' },
    ]);
  });

  it('Bedrock Converse (AWS SDK): an image block with the bytes inside the toolResult', async () => {
    fake = await startFakeBedrock({ accessKeyId: AWS_ENV.AWS_ACCESS_KEY_ID });
    const { body } = await afterTool({ provider: 'bedrock', model: 'anthropic.claude-3-5-haiku-20241022-v1:0', baseUrl: fake.url });
    const last = (body.messages as Array<{ content: Array<Record<string, unknown>> }>).at(-1)!;
    // The SDK sends the bytes base64-encoded in the JSON body.
    expect(last.content[0]).toEqual({
      toolResult: { toolUseId: 'call_shot', content: [{ text: NOTE }, { image: { format: 'png', source: { bytes: png } } }] },
    });
  });
});
