import { UpstreamError } from '@repo/errors';
import { callProvider } from '../http.js';
import type { CompletionRequest, LanguageModel } from './interface.js';
import type { ModelOptions } from './settings.js';

/** Google's Gemini API: `POST {base}/v1beta/models/{model}:generateContent` with `x-goog-api-key`. */
export class GeminiModel implements LanguageModel {
  readonly provider = 'gemini';

  constructor(private readonly options: ModelOptions) {}

  async complete(request: CompletionRequest): Promise<string> {
    const { baseUrl, apiKey, model, timeoutMs } = this.options;
    const url = `${baseUrl.replace(/\/$/, '')}/v1beta/models/${encodeURIComponent(model)}:generateContent`;
    const response = await callProvider('Gemini', url, {
      headers: { 'content-type': 'application/json', 'x-goog-api-key': apiKey ?? '' },
      body: JSON.stringify({
        systemInstruction: { parts: [{ text: request.system }] },
        contents: [{ role: 'user', parts: [{ text: request.prompt }] }],
        generationConfig: { maxOutputTokens: request.maxTokens, temperature: 0.2 },
      }),
      timeoutMs,
    });
    const body = (await response.json()) as { candidates?: { content?: { parts?: { text?: string }[] } }[] };
    const text = body.candidates?.[0]?.content?.parts
      ?.map((part) => part.text ?? '')
      .join('')
      .trim();
    if (!text) throw new UpstreamError('Gemini answered without text', { code: 'provider_error' });
    return text;
  }
}
