import { z } from 'zod';
import { type AppError, ERROR_STATUS, type ErrorCode, ValidationError } from './errors.js';

export interface ErrorResponse {
  status: number;
  body: unknown;
}

/** How a service writes an AppError on the wire. */
export type ErrorFormat = (error: AppError) => ErrorResponse;

/** Inbox service: `{ "error": { "code", "message", "details" } }`; invalid input is a 400. */
export const inboxErrorFormat: ErrorFormat = (error) => ({
  status: error.status,
  body: { error: { code: error.code, message: error.message, details: error.details } },
});

/**
 * Collab service, in the FastAPI shape its clients parse: invalid input is
 * `422 { "detail": [{ loc, msg, type }] }`, every other error `{ "detail": "message" }`.
 */
export const collabErrorFormat: ErrorFormat = (error) =>
  error instanceof ValidationError
    ? { status: 422, body: { detail: error.issues } }
    : { status: error.status, body: { detail: error.message } };

const validationIssue = z.object({
  loc: z.array(z.union([z.string(), z.number()])),
  msg: z.string(),
  type: z.string(),
});

/** The inbox error body, for API documentation. */
export const inboxErrorBody = z
  .object({
    error: z.object({
      code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]),
      message: z.string(),
      details: z.record(z.string(), z.unknown()),
    }),
  })
  .meta({ id: 'Error' });

/** The collab error body (FastAPI's), for API documentation. */
export const collabErrorBody = z.object({ detail: z.union([z.string(), z.array(validationIssue)]) }).meta({ id: 'HTTPError' });
