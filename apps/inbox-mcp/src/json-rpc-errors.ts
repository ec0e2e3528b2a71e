import { type ErrorFormat, ValidationError } from '@repo/errors';

/**
 * Every error this app answers, as a JSON-RPC error response: the MCP endpoints are JSON-RPC, and
 * a client of them cannot read the REST API's envelope. The only invalid input that reaches this
 * format is a body that is not JSON (or not UTF-8), a parse error; other client errors are the
 * implementation-defined -32000, and failures of the server itself -32603.
 */
export const jsonRpcErrorFormat: ErrorFormat = (error) => {
  const [code, message] =
    error instanceof ValidationError
      ? [-32700, `Parse error: ${error.issues.map((issue) => issue.msg).join('; ')}`]
      : [error.status >= 500 ? -32603 : -32000, error.message];
  return { status: error.status, body: { jsonrpc: '2.0', error: { code, message }, id: null } };
};
