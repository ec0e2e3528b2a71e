/** One completion request: instructions and the text to work on. */
export interface CompletionRequest {
  system: string;
  prompt: string;
  /** Longest answer, in tokens. */
  maxTokens: number;
}

export type LlmProviderName = 'openai' | 'anthropic' | 'gemini';

/**
 * A language model behind a vendor's HTTP API. A refusal or failure is an UpstreamError carrying
 * the vendor's status and message (never the key).
 */
export interface LanguageModel {
  readonly provider: LlmProviderName;
  complete(request: CompletionRequest): Promise<string>;
}
