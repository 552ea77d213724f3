/**
 * The stand-ins' media rules, read as raw HTTP: image parts are checked as the real APIs check them (format, bytes
 * that match the declared type) and recorded; /v1/audio/transcriptions takes multipart uploads.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PNG_1X1 } from '../../helpers/files.js';
import { imagesOf, startFakeAnthropic, startFakeOpenAI, type FakeLLM, type FakeOpenAI } from './index.js';

const fakes: FakeLLM[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.close()));
});
const track = <T extends FakeLLM>(f: T): T => (fakes.push(f), f);
const png = PNG_1X1.toString('base64');

describe('images in the LLM stand-ins', () => {
  it('OpenAI: records data-URL image parts, and refuses bytes that are no image', async () => {
    const f = track(await startFakeOpenAI());
    const ask = (url: string) =>
      fetch(`${f.url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
        body: JSON.stringify({
          model: 'gpt-4.1-mini',
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'what?' },
                { type: 'image_url', image_url: { url } },
              ],
            },
          ],
        }),
      });
    expect((await ask(`data:image/png;base64,${png}`)).status).toBe(200);
    expect(imagesOf(f.requests[0])).toEqual([{ messageIndex: 0, role: 'user', mimeType: 'image/png', bytes: PNG_1X1 }]);
    const bad = await ask(`data:image/png;base64,${Buffer.from('not an image').toString('base64')}`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('invalid_image_format');
  });

  it('Anthropic: records base64 image blocks, and refuses a media type that does not match the bytes', async () => {
    const f = track(await startFakeAnthropic());
    const ask = (mediaType: string) =>
      fetch(`${f.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({
          model: 'claude-haiku-4-5',
          max_tokens: 10,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'what?' },
                { type: 'image', source: { type: 'base64', media_type: mediaType, data: png } },
              ],
            },
          ],
        }),
      });
    expect((await ask('image/png')).status).toBe(200);
    expect(imagesOf(f.requests[0])[0]).toMatchObject({ mimeType: 'image/png', bytes: PNG_1X1 });
    const bad = await ask('image/jpeg');
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain('Image does not match the provided media type image/jpeg');
  });

  it('Anthropic: images inside a tool_result are checked and recorded with its tool_use_id; other block types are refused', async () => {
    const f = track(await startFakeAnthropic());
    const ask = (inner: unknown) =>
      fetch(`${f.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({
          model: 'claude-haiku-4-5',
          max_tokens: 10,
          tools: [{ name: 'shot', input_schema: { type: 'object', properties: {} } }],
          messages: [
            { role: 'user', content: 'take one' },
            { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'shot', input: {} }] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'here' }, inner] }] },
          ],
        }),
      });
    expect((await ask({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } })).status).toBe(200);
    expect(imagesOf(f.requests[0])).toEqual([{ messageIndex: 2, role: 'user', mimeType: 'image/png', bytes: PNG_1X1, toolUseId: 'toolu_1' }]);
    const mismatched = await ask({ type: 'image', source: { type: 'base64', media_type: 'image/gif', data: png } });
    expect(JSON.stringify(await mismatched.json())).toContain('messages.2.content.0.tool_result.content.1.image.source.base64.data: Image does not match');
    const wrongType = await ask({ type: 'tool_use', id: 'x', name: 'shot', input: {} });
    expect(wrongType.status).toBe(400);
    expect(JSON.stringify(await wrongType.json())).toContain("Input tag 'tool_use' found using 'type' does not match any of the expected tags");
  });

  it('OpenAI: an image in a tool message is refused (images only in user messages); Responses takes them in a function_call_output', async () => {
    const f = track(await startFakeOpenAI());
    const post = (path: string, body: unknown) =>
      fetch(`${f.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
        body: JSON.stringify(body),
      });
    const call = { id: 'call_1', type: 'function', function: { name: 'shot', arguments: '{}' } };
    const inTool = await post('/chat/completions', {
      model: 'gpt-4.1-mini',
      messages: [
        { role: 'user', content: 'take one' },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }] },
      ],
    });
    expect(inTool.status).toBe(400);
    expect(JSON.stringify(await inTool.json())).toContain("image content is only supported for messages with role 'user'");
    const responses = (image: string) =>
      post('/responses', {
        model: 'gpt-4.1',
        input: [
          { role: 'user', content: 'take one' },
          { type: 'function_call', call_id: 'call_1', name: 'shot', arguments: '{}' },
          {
            type: 'function_call_output',
            call_id: 'call_1',
            output: [
              { type: 'input_text', text: 'here' },
              { type: 'input_image', image_url: image },
            ],
          },
        ],
      });
    expect((await responses(`data:image/png;base64,${png}`)).status).toBe(200);
    const notImage = await responses(`data:image/png;base64,${Buffer.from('not an image').toString('base64')}`);
    expect(notImage.status).toBe(400);
    expect(JSON.stringify(await notImage.json())).toContain('unsupported image');
  });
});

describe('OpenAI stand-in: /v1/audio/transcriptions', () => {
  const upload = (f: FakeOpenAI, name: string, bytes: Buffer, model = 'gpt-4o-mini-transcribe') => {
    const form = new FormData();
    form.append('file', new File([new Uint8Array(bytes)], name));
    form.append('model', model);
    return fetch(`${f.url}/audio/transcriptions`, { method: 'POST', headers: { authorization: 'Bearer sk-test' }, body: form });
  };

  it('transcribes a multipart upload (by default the words after OggS), and records it', async () => {
    const f = track(await startFakeOpenAI());
    const res = await upload(f, 'voice.ogg', Buffer.from('OggS call mum'));
    expect(await res.json()).toMatchObject({ text: 'call mum' });
    expect(f.transcriptions).toMatchObject([{ model: 'gpt-4o-mini-transcribe', fileName: 'voice.ogg' }]);
    f.transcribeWith(() => ({ error: { status: 500, message: 'The server had an error' } }));
    expect((await upload(f, 'voice.ogg', Buffer.from('OggS'))).status).toBe(500);
  });

  it('judges the format by the file name, and wants a key, as the API does', async () => {
    const f = track(await startFakeOpenAI());
    const res = await upload(f, 'voice.xyz', Buffer.from('OggS'));
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toContain('Invalid file format');
    const form = new FormData();
    form.append('model', 'whisper-1');
    expect((await fetch(`${f.url}/audio/transcriptions`, { method: 'POST', body: form })).status).toBe(401);
  });
});
