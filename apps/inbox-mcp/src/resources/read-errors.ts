import { ProtocolErrorCode as ErrorCode } from '@modelcontextprotocol/server';
import { InboxApiError, InboxApiUnreachableError } from '../api-client.js';

/**
 * The code for a resource that does not exist: invalid params, as the 2026-07-28 specification
 * says for every revision (the SDK v2 sends it in place of 2025's -32002, which clients still accept).
 */
export const RESOURCE_NOT_FOUND = ErrorCode.InvalidParams;

/**
 * A failed read, answered as a JSON-RPC error with this code, message and data. (The SDK's
 * McpError would do, but it writes "MCP error <code>:" into the message it sends.)
 */
export class ResourceReadError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ResourceReadError';
  }
}

/**
 * A failed resource read as the JSON-RPC error the client gets: unknown ids are "resource not
 * found", malformed ones invalid params, and the rest internal errors carrying the API's code and
 * message. Errors this server did not expect pass through unchanged.
 */
export function resourceReadError(error: unknown, uri: string): unknown {
  if (error instanceof InboxApiError) {
    const data = { uri, code: error.code, details: error.details };
    if (error.status === 404) return new ResourceReadError(RESOURCE_NOT_FOUND, `Resource not found: ${error.message}`, data);
    if (error.status === 400) return new ResourceReadError(ErrorCode.InvalidParams, error.message, data);
    return new ResourceReadError(ErrorCode.InternalError, `${error.code}: ${error.message}`, data);
  }
  if (error instanceof InboxApiUnreachableError) return new ResourceReadError(ErrorCode.InternalError, error.message, { uri });
  return error;
}

/** Runs a read, answering its failures as resourceReadError says. */
export async function readOrFail<T>(uri: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    throw resourceReadError(error, uri);
  }
}
