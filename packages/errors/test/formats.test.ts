import {
  collabErrorFormat,
  ConflictError,
  inboxErrorFormat,
  NotFoundError,
  RateLimitedError,
  UpstreamError,
  ValidationError,
} from '../src/index.js';

const invalid = new ValidationError([{ loc: ['body', 'name'], msg: 'Field required', type: 'missing' }]);

describe('inbox error format', () => {
  it('wraps every error in { error: { code, message, details } }', () => {
    expect(inboxErrorFormat(new NotFoundError('Inbox not found', { inbox_id: 'x' }))).toEqual({
      status: 404,
      body: { error: { code: 'not_found', message: 'Inbox not found', details: { inbox_id: 'x' } } },
    });
  });

  it('answers invalid input with 400 validation_error and lists the issues', () => {
    expect(inboxErrorFormat(invalid)).toEqual({
      status: 400,
      body: {
        error: {
          code: 'validation_error',
          message: 'Invalid request: body.name: Field required',
          details: { issues: [{ loc: ['body', 'name'], msg: 'Field required', type: 'missing' }] },
        },
      },
    });
  });

  it('passes a provider failure on as 502 provider_error', () => {
    expect(inboxErrorFormat(new UpstreamError('Mailgun: 401 Forbidden', { code: 'provider_error' })).status).toBe(502);
  });
});

describe('collab error format', () => {
  it('answers invalid input with 422 and the FastAPI detail list', () => {
    expect(collabErrorFormat(invalid)).toEqual({
      status: 422,
      body: { detail: [{ loc: ['body', 'name'], msg: 'Field required', type: 'missing' }] },
    });
  });

  it('answers other errors with { detail: message }', () => {
    expect(collabErrorFormat(new ConflictError('A pending request already exists'))).toEqual({
      status: 409,
      body: { detail: 'A pending request already exists' },
    });
  });
});

describe('RateLimitedError', () => {
  it('carries a whole-second Retry-After of at least 1', () => {
    expect(new RateLimitedError('slow down', 0.2).headers).toEqual({ 'Retry-After': '1' });
    expect(new RateLimitedError('slow down', 41.5).headers).toEqual({ 'Retry-After': '42' });
  });
});
