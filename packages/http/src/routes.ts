import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Request, RequestHandler, Response, Router } from 'express';
import { z } from 'zod';
import { type InputLocation, parseInput, UnsupportedMediaTypeError, ValidationError, type ValidationIssue } from '@repo/errors';
import { illFormedInput, isTooDeep, undecodableQuery } from './well-formed.js';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type RouteParameter = z.ZodObject;

/**
 * What a handler receives: the validated path, query, headers and body, the API's context (who
 * is calling, see ApiOptions.context), and the raw request and response for the rare handler
 * that needs them (a file download).
 */
export type RouteInput<
  P extends RouteParameter,
  Q extends RouteParameter,
  H extends RouteParameter,
  B extends z.ZodType,
  Context extends object = object,
> = Context & {
  params: z.output<P>;
  query: z.output<Q>;
  headers: z.output<H>;
  body: z.output<B>;
  req: Request;
  res: Response;
};

export interface RouteDefinition<
  P extends RouteParameter,
  Q extends RouteParameter,
  H extends RouteParameter,
  B extends z.ZodType,
  R extends z.ZodType,
  Context extends object = object,
> {
  method: Method;
  /** OpenAPI-style path, e.g. `/v1/inboxes/{inbox_id}`; Express sees `/v1/inboxes/:inbox_id`. */
  path: string;
  summary: string;
  description?: string;
  tags?: string[];
  params?: P;
  query?: Q;
  /** Request headers the route reads (names in lower case); other headers are left alone. */
  headers?: H;
  body?: B;
  /**
   * A body in another format, which the handler reads itself from `req` (multipart form data, a
   * file's bytes): documented by media type, neither parsed nor validated here. Not with `body`.
   */
  rawBody?: RawContent;
  /** Status of a successful answer (default 200). With 204 the handler returns nothing. */
  status?: 200 | 201 | 202 | 204;
  /** Schema of a successful answer's JSON body, for the documentation. */
  response?: R;
  /** A successful answer in another format, which the handler writes itself (a file): documented by media type. */
  rawResponse?: RawContent;
  /**
   * Other successful answers, by status, that the handler writes itself (`res.status(...).json(...)`,
   * then returns undefined): a request that asks for another kind of answer (a dry run, say).
   */
  otherResponses?: Record<number, { description: string; schema: z.ZodType }>;
  /** Error statuses this route can answer with, documented with the service's error body. */
  errors?: number[];
  /**
   * Checks the caller may use the route (throws 403 otherwise). Runs after the context is
   * resolved and before the input is read, so a caller without the right learns nothing from
   * validation errors.
   */
  authorize?: (context: Context) => void;
  /**
   * Returns the response body. A handler that writes the response itself (a file download)
   * returns `undefined` after sending it.
   */
  handler: (input: RouteInput<P, Q, H, B, Context>) => Promise<z.input<R> | undefined> | z.input<R> | undefined;
}

type NoInput = z.ZodObject<Record<never, never>>;

/** Content a handler reads or writes itself, for the documentation: a schema per media type. */
export interface RawContent {
  description?: string;
  content: Record<string, z.ZodType>;
}

export interface Api<Context extends object = object> {
  route<
    P extends RouteParameter = NoInput,
    Q extends RouteParameter = NoInput,
    H extends RouteParameter = NoInput,
    B extends z.ZodType = z.ZodUndefined,
    R extends z.ZodType = z.ZodUnknown,
  >(
    definition: RouteDefinition<P, Q, H, B, R, Context>,
  ): void;
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid request',
  401: 'Missing or invalid credentials',
  403: 'Not allowed for this role',
  404: 'Not found',
  409: 'Conflict with the current state',
  410: 'No longer kept',
  413: 'Payload too large',
  422: 'Validation error',
  429: 'Rate limited; see Retry-After',
  502: 'An upstream system failed',
};

/**
 * Declares routes once: each becomes an Express handler that validates its path, query and body
 * with zod (errors point at the field) and an OpenAPI operation documenting the same schemas.
 */
export interface ApiOptions<Context extends object = object> {
  router: Router;
  openapi: OpenAPIRegistry;
  /** The service's error body, documented for every error status. */
  errorBody: z.ZodType;
  tags?: string[];
  /** OpenAPI security requirements of every route, e.g. `[{ bearerAuth: [] }]`; the scheme is registered by the app. */
  security?: Record<string, string[]>[];
  /** The status of invalid input in the service's error format (default 400; FastAPI's 422 for collab). */
  validationStatus?: 400 | 422;
  /**
   * Who is calling, resolved before anything else of every route (an authentication that answers
   * 401, say) and handed to its handler among the input: `handler: ({ body, actor }) => ...`.
   */
  context?: (req: Request, res: Response) => Promise<Context> | Context;
  /** Error statuses the context can answer with (401), documented on every route. */
  contextErrors?: number[];
}

// Built once: zod compiles a schema's parser on its first use, which per request would cost more than the parse.
const NO_INPUT = z.object({});

export function createApi<Context extends object = object>(options: ApiOptions<Context>): Api<Context> {
  const { router, openapi, errorBody } = options;
  const resolveContext = options.context ?? (() => ({}) as Context);
  return {
    route(definition) {
      const status = definition.status ?? 200;
      openapi.registerPath({
        ...documentRoute(definition, status, {
          errorBody,
          validationStatus: options.validationStatus ?? 400,
          tags: options.tags,
          contextErrors: options.contextErrors ?? [],
        }),
        security: options.security,
      });
      const handle: RequestHandler = async (req, res) => {
        const context = await resolveContext(req, res);
        definition.authorize?.(context);
        if (definition.body) requireJsonBody(req);
        // Text no database stores as sent (NUL, lone surrogates, bad percent-escapes), in any field; nesting too deep.
        const textIssues = [
          ...illFormedInput(req.params, 'path'),
          ...undecodableQuery(req.originalUrl),
          ...illFormedInput(req.query, 'query'),
          ...(definition.body ? illFormedInput(req.body, 'body') : []),
        ];
        // Every invalid input at once, whichever part of the request it is in.
        const issues: ValidationIssue[] = [];
        const parse = (schema: z.ZodType, location: InputLocation, value: unknown): unknown => {
          try {
            return parseInput(schema, location, value);
          } catch (error) {
            if (!(error instanceof ValidationError)) throw error;
            issues.push(...error.issues);
            return undefined;
          }
        };
        const input = {
          ...context,
          params: parse(definition.params ?? NO_INPUT, 'path', req.params),
          query: parse(definition.query ?? NO_INPUT, 'query', req.query),
          headers: definition.headers ? parse(definition.headers, 'header', req.headers) : {},
          // A body nested too deep is not parsed further: a recursive schema would overflow the stack on it.
          body: definition.body && !textIssues.some(isTooDeep) ? parse(definition.body, 'body', req.body) : undefined,
          req,
          res,
        };
        // A value with unstorable text is reported for that alone, not also for the rules it then breaks.
        const textLocs = new Set(textIssues.map((issue) => issue.loc.join('\0')));
        const allIssues = [...textIssues, ...issues.filter((issue) => !textLocs.has(issue.loc.join('\0')))];
        if (allIssues.length > 0) throw new ValidationError(allIssues);
        const result = await definition.handler(input as Parameters<typeof definition.handler>[0]);
        if (res.headersSent) return;
        if (status === 204) res.status(204).end();
        else res.status(status).json(result);
      };
      router[definition.method](expressPath(definition.path), handle);
    },
  };
}

/**
 * A body of another declared type that no parser read (req.body undefined) is refused with 415,
 * so a client that sent form data or text learns why instead of reading "field required". A
 * request without Content-Type is left to validation, which names the missing fields.
 */
function requireJsonBody(req: Request): void {
  const type = req.get('content-type');
  if (req.body !== undefined || type === undefined || req.is('application/json')) return;
  throw new UnsupportedMediaTypeError(`Expected a JSON body with Content-Type: application/json (got ${type})`);
}

/** `/v1/inboxes/{inbox_id}` → `/v1/inboxes/:inbox_id` */
export function expressPath(openApiPath: string): string {
  return openApiPath.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

function documentRoute<Context extends object>(
  definition: RouteDefinition<RouteParameter, RouteParameter, RouteParameter, z.ZodType, z.ZodType, Context>,
  status: number,
  options: { errorBody: z.ZodType; validationStatus: number; tags: string[] | undefined; contextErrors: number[] },
): RouteConfig {
  const { errorBody, validationStatus } = options;
  const takesInput = Boolean(
    definition.params || definition.query || definition.headers || definition.body || definition.rawBody,
  );
  const errorStatuses = [
    ...new Set([...options.contextErrors, ...(takesInput ? [validationStatus] : []), ...(definition.errors ?? [])]),
  ].sort((a, b) => a - b);
  return {
    method: definition.method,
    path: definition.path,
    summary: definition.summary,
    description: definition.description,
    tags: definition.tags ?? options.tags,
    request: {
      params: definition.params,
      query: definition.query,
      headers: definition.headers,
      body: definition.body
        ? {
            // A body schema that takes no body at all (`.optional()`) documents the body as optional.
            required: !definition.body.safeParse(undefined).success,
            content: { 'application/json': { schema: definition.body } },
          }
        : definition.rawBody && {
            required: true,
            description: definition.rawBody.description,
            content: mediaTypes(definition.rawBody),
          },
    },
    responses: {
      [status]: definition.rawResponse
        ? { description: definition.rawResponse.description ?? 'Success', content: mediaTypes(definition.rawResponse) }
        : status === 204 || !definition.response
          ? { description: 'Success' }
          : { description: 'Success', content: { 'application/json': { schema: definition.response } } },
      ...Object.fromEntries(
        Object.entries(definition.otherResponses ?? {}).map(([code, other]) => [
          code,
          { description: other.description, content: { 'application/json': { schema: other.schema } } },
        ]),
      ),
      ...Object.fromEntries(
        errorStatuses.map((code) => [
          code,
          { description: STATUS_TEXT[code] ?? 'Error', content: { 'application/json': { schema: errorBody } } },
        ]),
      ),
    },
  };
}

function mediaTypes(raw: RawContent): Record<string, { schema: z.ZodType }> {
  return Object.fromEntries(Object.entries(raw.content).map(([type, schema]) => [type, { schema }]));
}
