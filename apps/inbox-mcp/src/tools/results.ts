import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/server';
import type { Logger } from '@repo/http';
import { InboxApiError, InboxApiUnreachableError } from '../api-client.js';

/** A tool's answer: the structured result, the same JSON as text for clients that read only text, then any extra content. */
export function structuredResult(value: Record<string, unknown>, extraContent: ContentBlock[] = []): CallToolResult {
  return { structuredContent: value, content: [{ type: 'text', text: JSON.stringify(value) }, ...extraContent] };
}

/**
 * A failure the model can act on, in inbox-api's own envelope. No structuredContent: clients
 * check that against the tool's output schema, which describes success.
 */
export function errorResult(code: string, message: string, details: Record<string, unknown> = {}): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: { code, message, details } }) }] };
}

/**
 * Runs a tool's work against the API. The API's errors and its absence become error results;
 * anything else is a bug of this server: logged here, and left to the SDK, which answers it as an
 * error result carrying only the message.
 */
export async function runTool(
  context: { logger: Logger; tool: string; signal: AbortSignal },
  work: () => Promise<CallToolResult>,
): Promise<CallToolResult> {
  try {
    return await work();
  } catch (error) {
    // Cancelled: the SDK sends no answer at all.
    if (context.signal.aborted) throw error;
    if (error instanceof InboxApiError) return errorResult(error.code, error.message, error.details);
    if (error instanceof InboxApiUnreachableError) return errorResult('api_unreachable', error.message);
    context.logger.error({ err: error, tool: context.tool }, 'tool failed');
    throw error;
  }
}
