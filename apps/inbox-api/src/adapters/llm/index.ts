import { AnthropicModel } from './anthropic.js';
import { GeminiModel } from './gemini.js';
import type { LanguageModel } from './interface.js';
import { OpenAiModel } from './openai.js';
import { DEFAULT_BASE_URLS, type LlmSettings } from './settings.js';

export type { CompletionRequest, LanguageModel, LlmProviderName } from './interface.js';
export { checkLlmSettings, llmSettings, type LlmSettings } from './settings.js';

/** How long one completion may take. */
const TIMEOUT_MS = 60_000;

/** The model LLM_PROVIDER chooses, or undefined when summaries are off. Expects settings that passed checkLlmSettings. */
export function createLanguageModel(settings: LlmSettings, options: { timeoutMs?: number } = {}): LanguageModel | undefined {
  const provider = settings.LLM_PROVIDER;
  if (!provider) return undefined;
  const modelOptions = {
    baseUrl: settings.LLM_BASE_URL ?? DEFAULT_BASE_URLS[provider],
    apiKey: settings.LLM_API_KEY,
    model: settings.LLM_MODEL!,
    timeoutMs: options.timeoutMs ?? TIMEOUT_MS,
  };
  switch (provider) {
    case 'openai':
      return new OpenAiModel(modelOptions);
    case 'anthropic':
      return new AnthropicModel(modelOptions);
    case 'gemini':
      return new GeminiModel(modelOptions);
  }
}
