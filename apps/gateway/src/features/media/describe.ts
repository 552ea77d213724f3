/**
 * Hermes' "auto" image input: a main model that cannot see images gets a description of each one written by a
 * vision model (HERALD_VISION_MODEL), so a screenshot or a photo still reaches the conversation as text.
 */
import type { ImageInput, Provider } from '@herald/agent-core';
import type { ModelCall } from '../budgets/meter.js';

/** The description, and the call that wrote it (priced with the turn's calls). */
interface ImageDescription {
  text: string;
  /** Its model is the one that answered: the side-task chain's first, or the fallback that took over. */
  call: ModelCall;
}

export type DescribeImage = (image: ImageInput, caption: string, signal?: AbortSignal) => Promise<ImageDescription>;

const DESCRIBE_SYSTEM = 'You describe images for an assistant that cannot see them. Be factual and complete; never invent what is not visible.';
const DESCRIBE_PROMPT =
  'Describe this image so that someone who cannot see it can answer questions about it: what it shows, any text in it (transcribed exactly), numbers, charts, people and their actions, and anything unusual.';
/** A description is a paragraph or two, not an essay. */
const DESCRIPTION_MAX_TOKENS = 800;

export function createImageDescriber(provider: Provider): DescribeImage {
  return async (image, caption, signal) => {
    const ask = caption.trim() === '' ? DESCRIBE_PROMPT : `${DESCRIBE_PROMPT}\nThe person who sent it wrote: "${caption.trim()}"`;
    const result = await provider.complete({
      systemPrompt: DESCRIBE_SYSTEM,
      messages: [{ role: 'user', content: ask, images: [image] }],
      tools: [],
      maxTokens: DESCRIPTION_MAX_TOKENS,
      signal: signal ?? new AbortController().signal,
    });
    const text = result.message.content?.trim() ?? '';
    if (text === '') throw new Error('the vision model returned no description');
    return { text, call: { by: result.answeredBy ?? provider, usage: result.usage } };
  };
}
