import { type AppError, type ErrorFormat, ValidationError } from '@repo/errors';

/**
 * Every error this app answers, as a JSON-RPC error response: the MCP endpoints are JSON-RPC, and
 * a client of them cannot read the REST API's envelope. The only invalid input that reaches this
 * format is a body that is not JSON (or not UTF-8), a parse error, or JSON that is no object or
 * array, an invalid request; other client errors are the implementation-defined -32000, and
 * failures of the server itself -32603.
 */
export const jsonRpcErrorFormat: ErrorFormat = (error) => {
  const [code, message] = codeAndMessage(error);
  return { status: error.status, body: { jsonrpc: '2.0', error: { code, message }, id: null } };
};

function codeAndMessage(error: AppError): [number, string] {
  if (!(error instanceof ValidationError)) return [error.status >= 500 ? -32603 : -32000, error.message];
  const reasons = error.issues.map((issue) => issue.msg).join('; ');
  // JSON, but no request object (`null`, `5`): JSON-RPC 2.0's own example of an invalid request.
  if (error.issues.every((issue) => issue.type === 'json_type')) return [-32600, `Invalid Request: ${reasons}`];
  return [-32700, `Parse error: ${reasons}`];
}
