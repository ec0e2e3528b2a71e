import { UpstreamError } from '@repo/errors';
import { callProvider } from '../http.js';
import type { CompletionRequest, LanguageModel } from './interface.js';
import type { ModelOptions } from './settings.js';

/** Anthropic's Messages API: `POST {base}/v1/messages` with `x-api-key` and `anthropic-version`. */
export class AnthropicModel implements LanguageModel {
  readonly provider = 'anthropic';

  constructor(private readonly options: ModelOptions) {}

  async complete(request: CompletionRequest): Promise<string> {
    const { baseUrl, apiKey, model, timeoutMs } = this.options;
    const response = await callProvider('Anthropic', `${baseUrl.replace(/\/$/, '')}/v1/messages`, {
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey ?? '', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model,
        max_tokens: request.maxTokens,
        system: request.system,
        messages: [{ role: 'user', content: request.prompt }],
      }),
      timeoutMs,
    });
    const body = (await response.json()) as { content?: { type: string; text?: string }[] };
    const text = body.content
      ?.filter((block) => block.type === 'text')
      .map((block) => block.text ?? '')
      .join('')
      .trim();
    if (!text) throw new UpstreamError('Anthropic answered without text', { code: 'provider_error' });
    return text;
  }
}
