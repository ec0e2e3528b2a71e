import { type z } from 'zod';
import { setting } from '@repo/config';

const PROVIDERS = ['openai', 'anthropic', 'gemini'] as const;

/** Where each vendor answers unless LLM_BASE_URL says otherwise. */
export const DEFAULT_BASE_URLS: Record<(typeof PROVIDERS)[number], string> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
  gemini: 'https://generativelanguage.googleapis.com',
};

/** Environment variables of thread summaries: the language model that writes them. */
export function llmSettings() {
  return {
    LLM_PROVIDER: setting
      .oneOf(PROVIDERS)
      .optional()
      .describe(
        'Language model that writes thread summaries: `openai` (any OpenAI-compatible API), `anthropic` or `gemini`. Unset: summaries are off and `summary` stays null.',
      ),
    LLM_BASE_URL: setting
      .url()
      .optional()
      .describe(
        'API base of the model. Default: https://api.openai.com/v1, https://api.anthropic.com or https://generativelanguage.googleapis.com, by LLM_PROVIDER.',
      ),
    LLM_MODEL: setting
      .string()
      .optional()
      .describe('Model name, e.g. `gpt-4o-mini`, `claude-3-5-haiku-latest`, `gemini-2.0-flash`. Required with LLM_PROVIDER.'),
    LLM_API_KEY: setting
      .string()
      .optional()
      .describe('API key of the model vendor (optional for a local OpenAI-compatible server).'),
    INBOX_SUMMARY_DEBOUNCE_SECONDS: setting
      .integer({ min: 0, max: 3600 })
      .default(20)
      .describe('A thread is summarised this long after its newest message, so that a burst of messages makes one call.'),
  };
}

export type LlmSettings = z.output<z.ZodObject<ReturnType<typeof llmSettings>>>;

export interface ModelOptions {
  baseUrl: string;
  apiKey: string | undefined;
  model: string;
  timeoutMs: number;
}

/** For the app's `superRefine`: a provider needs a model name. */
export function checkLlmSettings(settings: LlmSettings, ctx: z.RefinementCtx): void {
  if (settings.LLM_PROVIDER && !settings.LLM_MODEL) {
    ctx.addIssue({ code: 'custom', path: ['LLM_MODEL'], message: `is required when LLM_PROVIDER is ${settings.LLM_PROVIDER}` });
  }
}
