import { UpstreamError } from '@repo/errors';
import { callProvider } from '../http.js';
import type { CompletionRequest, LanguageModel } from './interface.js';
import type { ModelOptions } from './settings.js';

/**
 * OpenAI's Chat Completions API and every server that speaks it (vLLM, Ollama, LiteLLM, Azure
 * through a gateway): `POST {base}/chat/completions` with a bearer key, where the base URL
 * includes the version (`https://api.openai.com/v1`).
 */
export class OpenAiModel implements LanguageModel {
  readonly provider = 'openai';

  constructor(private readonly options: ModelOptions) {}

  async complete(request: CompletionRequest): Promise<string> {
    const { baseUrl, apiKey, model, timeoutMs } = this.options;
    const response = await callProvider('OpenAI-compatible API', `${baseUrl.replace(/\/$/, '')}/chat/completions`, {
      headers: { 'content-type': 'application/json', ...(apiKey && { authorization: `Bearer ${apiKey}` }) },
      body: JSON.stringify({
        model,
        messages: [
          { role: 'system', content: request.system },
          { role: 'user', content: request.prompt },
        ],
        max_tokens: request.maxTokens,
        temperature: 0.2,
      }),
      timeoutMs,
    });
    const body = (await response.json()) as { choices?: { message?: { content?: string | null } }[] };
    const text = body.choices?.[0]?.message?.content?.trim();
    if (!text) throw new UpstreamError('The OpenAI-compatible API answered without a message', { code: 'provider_error' });
    return text;
  }
}
