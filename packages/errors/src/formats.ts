import { type AppError, ValidationError } from './errors.js';

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
