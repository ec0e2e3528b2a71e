import type { Express } from 'express';
import request from 'supertest';

export interface File {
  filename: string;
  content_type: string;
  content: Buffer;
}

export interface Sent {
  id: string;
  thread_id: string;
  attachments: { id: string; filename: string }[];
}

/** Sends a message with these files through POST /v1/messages: the way attachments come to be. */
export async function sendWithFiles(
  app: Express,
  options: { inboxId: string; files: File[]; replyTo?: string; headers?: Record<string, string> },
): Promise<Sent> {
  const res = await request(app)
    .post('/v1/messages')
    .set(options.headers ?? {})
    .send({
      inbox_id: options.inboxId,
      to: ['someone@example.com'],
      subject: 'Files',
      body: 'See attached.',
      reply_to_thread_id: options.replyTo,
      attachments: options.files.map((file) => ({ ...file, content: file.content.toString('base64') })),
    });
  if (res.status !== 201) throw new Error(`send failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Sent;
}

export function textFile(filename: string, text = filename): File {
  return { filename, content_type: 'text/plain', content: Buffer.from(text) };
}

/** Path and query of an absolute URL, for supertest. */
export function pathOf(url: string): string {
  const { pathname, search } = new URL(url);
  return `${pathname}${search}`;
}

/** Reads a response body as bytes, whatever its type. */
export function bytes(res: request.Response, done: (error: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('end', () => done(null, Buffer.concat(chunks)));
}

/** GET with the body read as bytes. */
export function download(app: Express, path: string, headers: Record<string, string> = {}) {
  return request(app).get(path).set(headers).buffer(true).parse(bytes);
}
