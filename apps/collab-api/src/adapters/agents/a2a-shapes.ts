/**
 * The JSON shapes of A2A messages and results in protocol 1.0 and 0.3, and the conversions
 * between them, as pure functions. A route's `message` may come in either shape (or as
 * `{"text": ...}`) and is read into 1.0's, which the SDK sends in the version the agent's card
 * declares; the result comes back in the agent's version. What differs:
 *
 * | | 1.0 | 0.3 |
 * |---|---|---|
 * | role | `ROLE_USER`, `ROLE_AGENT` | `user`, `agent` |
 * | part | `{text}`, `{data}`, `{url}`, `{raw}` (+ mediaType, filename) | `{kind: "text", text}`, `{kind: "data", data}`, `{kind: "file", file: {uri or bytes, mimeType, name}}` |
 * | task state | `TASK_STATE_COMPLETED`, ... | `completed`, `input-required`, ... |
 * | result of a send | `{"message": ...}` or `{"task": ...}` | the message or task, with `kind` |
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { parseInput } from '@repo/errors';

type Json = Record<string, unknown>;

const id = z.string().min(1);
const metadata = z.record(z.string(), z.unknown());
const common = {
  messageId: id.optional(),
  contextId: id.optional(),
  taskId: id.optional(),
  referenceTaskIds: z.array(id).optional(),
  metadata: metadata.optional(),
  extensions: z.array(z.string()).optional(),
};

const V1_CONTENT = ['text', 'data', 'url', 'raw'] as const;

const v1Part = z
  .object({
    text: z.string().optional(),
    data: z.unknown().optional(),
    url: z.string().optional(),
    raw: z.base64().optional(),
    mediaType: z.string().optional(),
    filename: z.string().optional(),
    metadata: metadata.optional(),
  })
  .refine((part) => V1_CONTENT.filter((key) => Object.hasOwn(part, key)).length === 1, {
    message: 'An A2A 1.0 part has exactly one of text, data, url or raw',
  });

const v1Message = z.object({ ...common, role: z.enum(['ROLE_USER', 'ROLE_AGENT']).optional(), parts: z.array(v1Part).min(1) });

const v03Part = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('text'), text: z.string(), metadata: metadata.optional() }),
  z.object({ kind: z.literal('data'), data: metadata, metadata: metadata.optional() }),
  z.object({
    kind: z.literal('file'),
    file: z.union([
      z.object({ uri: z.string(), mimeType: z.string().optional(), name: z.string().optional() }),
      z.object({ bytes: z.base64(), mimeType: z.string().optional(), name: z.string().optional() }),
    ]),
    metadata: metadata.optional(),
  }),
]);

const v03Message = z.object({
  ...common,
  kind: z.literal('message').optional(),
  role: z.enum(['user', 'agent']).optional(),
  parts: z.array(v03Part).min(1),
});

const textMessage = z.object({ text: z.string(), contextId: id.optional(), taskId: id.optional() });

export type V1Message = z.output<typeof v1Message> & { messageId: string; role: 'ROLE_USER' | 'ROLE_AGENT' };
type V1Part = z.output<typeof v1Part>;
type V03Message = z.output<typeof v03Message>;
type V03Part = z.output<typeof v03Part>;

/**
 * A route's `message` as an A2A 1.0 message: given in 1.0's shape, in 0.3's (told apart by its
 * `kind` fields or lower-case role), or as `{"text": ...}`. Unknown fields are dropped (a message
 * for a whole project may carry an MCP tool call too). Throws ValidationError under `body.message`.
 */
export function readA2aMessage(input: unknown): V1Message {
  const parse = <T>(schema: z.ZodType<T>): T =>
    parseInput(z.object({ message: schema }) as z.ZodType<{ message: T }>, 'body', { message: input }).message;
  const object = (typeof input === 'object' && input !== null ? input : {}) as Json;
  if (Array.isArray(object.parts)) {
    const isV03 =
      object.kind === 'message' ||
      object.role === 'user' ||
      object.role === 'agent' ||
      object.parts.some((part) => typeof part === 'object' && part !== null && 'kind' in part);
    return isV03 ? v03ToV1Message(parse(v03Message)) : withDefaults(parse(v1Message));
  }
  // Anything else is read as {"text": ...}, so a message with neither parts nor text is reported as missing its text.
  const { text, ...ids } = parse(textMessage);
  return withDefaults({ ...ids, parts: [{ text }] });
}

function withDefaults(message: z.output<typeof v1Message>): V1Message {
  return { ...message, messageId: message.messageId ?? randomUUID(), role: message.role ?? 'ROLE_USER' };
}

function v03ToV1Message(message: V03Message): V1Message {
  const { kind: _kind, role, parts, ...rest } = message;
  return withDefaults({
    ...rest,
    role: role === 'agent' ? 'ROLE_AGENT' : 'ROLE_USER',
    parts: parts.map(v03ToV1Part),
  });
}

function v03ToV1Part(part: V03Part): V1Part {
  const meta = part.metadata === undefined ? {} : { metadata: part.metadata };
  if (part.kind === 'text') return { text: part.text, ...meta };
  if (part.kind === 'data') return { data: part.data, ...meta };
  const { mimeType, name } = part.file;
  const described = { ...meta, ...(mimeType ? { mediaType: mimeType } : {}), ...(name ? { filename: name } : {}) };
  return 'uri' in part.file ? { url: part.file.uri, ...described } : { raw: part.file.bytes, ...described };
}

/** A 1.0 message as the SDK's toJSON writes it (fields at their default left out) → 0.3. */
export function v1ToV03Message(message: Json): Json {
  const { role, parts, ...rest } = message;
  return {
    kind: 'message',
    ...rest,
    role: role === 'ROLE_AGENT' ? 'agent' : 'user',
    parts: asArray(parts).map(v1ToV03Part),
  };
}

function v1ToV03Part(value: unknown): Json {
  const { text, data, url, raw, mediaType, filename, metadata: meta } = value as Json;
  const extra = meta === undefined ? {} : { metadata: meta };
  if (typeof text === 'string') return { kind: 'text', text, ...extra };
  if (url !== undefined || raw !== undefined) {
    const file = { ...(url !== undefined ? { uri: url } : { bytes: raw }), ...(mediaType ? { mimeType: mediaType } : {}) };
    return { kind: 'file', file: filename ? { ...file, name: filename } : file, ...extra };
  }
  // 0.3 data parts hold objects only.
  return { kind: 'data', data: isObject(data) ? data : { value: data }, ...extra };
}

export function v1ToV03Task(task: Json): Json {
  const { status, artifacts, history, ...rest } = task;
  const converted: Json = { kind: 'task', ...rest };
  if (isObject(status)) {
    const { state, message, ...statusRest } = status;
    converted.status = {
      ...statusRest,
      state: v03State(state),
      ...(isObject(message) ? { message: v1ToV03Message(message) } : {}),
    };
  }
  if (artifacts !== undefined) {
    converted.artifacts = asArray(artifacts).map((artifact) => {
      const { parts, ...artifactRest } = artifact as Json;
      return { ...artifactRest, parts: asArray(parts).map(v1ToV03Part) };
    });
  }
  if (history !== undefined) converted.history = asArray(history).map((message) => v1ToV03Message(message as Json));
  return converted;
}

/** TASK_STATE_INPUT_REQUIRED → input-required; an unknown state is 0.3's `unknown`. */
function v03State(state: unknown): string {
  if (typeof state !== 'string' || !state.startsWith('TASK_STATE_') || state === 'TASK_STATE_UNSPECIFIED') return 'unknown';
  return state.slice('TASK_STATE_'.length).toLowerCase().replace(/_/g, '-');
}

/** A 1.0 SendMessage result (`{"message"}` or `{"task"}`) as 0.3's message/send result. */
export function v1ToV03Result(result: Json): Json {
  if (isObject(result.task)) return v1ToV03Task(result.task);
  if (isObject(result.message)) return v1ToV03Message(result.message);
  return result;
}

/** Tasks addressed by a top-level `params.id`, in either version. */
const TASK_ADDRESSED_METHODS = new Set([
  'GetTask',
  'CancelTask',
  'SubscribeToTask',
  'tasks/get',
  'tasks/cancel',
  'tasks/resubscribe',
  'tasks/pushNotificationConfig/get',
  'tasks/pushNotificationConfig/list',
  'tasks/pushNotificationConfig/delete',
]);

/**
 * The fields that hold a task or context id, and those that hold a list of task ids, in both
 * spellings an agent reads: proto JSON's camelCase and its proto field names (@a2a-js/sdk's
 * fromJSON takes `task_id` where `taskId` is missing), so that neither reaches the agent unbound.
 */
const ID_FIELDS = new Set(['taskId', 'task_id', 'contextId', 'context_id']);
const ID_LIST_FIELDS = new Set(['referenceTaskIds', 'reference_task_ids']);

/**
 * `value` (a message, request params or a result, of either version) with every task and context
 * id passed through `map`: the ID_FIELDS and ID_LIST_FIELDS wherever they are, the `id` of every
 * task (an object with `id`, a context id and `status`), and `params.id` of the methods that
 * address a task by it (give `method` for request params). Ids that are no strings are left as
 * they are: unboundId finds them in a request before it is sent.
 */
export function mapTaskIds<T>(value: T, map: (id: string) => string, method?: string): T {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!isObject(node)) return node;
    return Object.fromEntries(
      Object.entries(node).map(([key, child]) => {
        if ((ID_FIELDS.has(key) || (key === 'id' && isTask(node))) && typeof child === 'string') {
          return [key, map(child)];
        }
        if (ID_LIST_FIELDS.has(key) && Array.isArray(child)) {
          return [key, (child as unknown[]).map((entry) => (typeof entry === 'string' ? map(entry) : entry))];
        }
        return [key, walk(child)];
      }),
    );
  };
  const mapped = walk(value);
  if (method && TASK_ADDRESSED_METHODS.has(method) && isObject(mapped) && typeof mapped.id === 'string' && !isTask(mapped)) {
    return { ...mapped, id: map(mapped.id) } as T;
  }
  return mapped as T;
}

/**
 * Pure: where request `params` hold a task or context id that mapTaskIds cannot bind, as
 * `params.<path>`; undefined when they hold none. An id is a string, or null for none (a list of
 * them, for ID_LIST_FIELDS): an agent's SDK reads any other value as its string (`["<id>"]` as
 * `<id>`), which would reach the agent unbound.
 */
export function unboundId(params: unknown, method: string): string | undefined {
  const find = (node: unknown, path: string): string | undefined => {
    if (Array.isArray(node)) {
      for (const [index, child] of node.entries()) {
        const found = find(child, `${path}[${index}]`);
        if (found) return found;
      }
      return undefined;
    }
    if (!isObject(node)) return undefined;
    for (const [key, child] of Object.entries(node)) {
      const at = `${path}.${key}`;
      if (ID_FIELDS.has(key)) {
        if (!isBindable(child)) return at;
      } else if (ID_LIST_FIELDS.has(key)) {
        if (child !== null && !(Array.isArray(child) && child.every((entry) => typeof entry === 'string'))) return at;
      } else {
        const found = find(child, at);
        if (found) return found;
      }
    }
    return undefined;
  };
  if (TASK_ADDRESSED_METHODS.has(method) && isObject(params) && 'id' in params && !isBindable(params.id)) return 'params.id';
  return find(params, 'params');
}

function isBindable(id: unknown): boolean {
  return typeof id === 'string' || id === null;
}

function isTask(node: Json): boolean {
  const contextId = node.contextId ?? node.context_id;
  return typeof node.id === 'string' && typeof contextId === 'string' && 'status' in node;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
