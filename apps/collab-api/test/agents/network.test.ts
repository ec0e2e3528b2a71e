import { afterEventStreamBytes, answersRequest, EVENT_STREAM_START, isEventStream } from '../../src/adapters/agents/network.js';

describe('afterEventStreamBytes', () => {
  const scan = (...chunks: string[]) =>
    chunks.reduce((state, chunk) => afterEventStreamBytes(state, new TextEncoder().encode(chunk)), EVENT_STREAM_START);

  it('counts the bytes of the event under way, from 0 after each empty line, whichever line ends it', () => {
    expect(scan('data: a\n').eventBytes).toBe(8);
    for (const end of ['\n\n', '\r\n\r\n', '\r\r', '\n\r']) {
      expect(scan(`event: message\ndata: abc${end}`).eventBytes).toBe(0);
      expect(scan(`data: abc${end}`, 'data: x').eventBytes).toBe(7);
    }
    // A CRLF is one line end (and one byte): the LF after a CR ends no empty line.
    expect(scan('data: a\r', '\n', 'data: b').eventBytes).toBe(15);
    // Lines of one event add up: each data line's text is kept until the event ends.
    expect(scan('data: a\n', 'data: b\n', 'data: c').eventBytes).toBe(23);
  });

  it('keeps the largest event, also one that ends in the chunk that made it the largest', () => {
    expect(scan('data: 123456789\n\n', 'data: 1\n\n').largestEventBytes).toBe(17);
    expect(scan('data: 1', '23456789\n\ndata: 1').largestEventBytes).toBe(17);
  });
});

describe('answersRequest', () => {
  it('takes the response with the request id, or an error with id null (JSON-RPC 2.0)', () => {
    const request = { jsonrpc: '2.0', method: 'GetTask', id: 7 } as const;
    expect(answersRequest({ id: 7, result: {} }, request)).toBe(true);
    expect(answersRequest({ id: null, error: { code: -32700, message: 'Parse error' } }, request)).toBe(true);
    expect(answersRequest({ id: '7', result: {} }, request)).toBe(false);
    expect(answersRequest({ id: 8, error: { code: 1, message: 'x' } }, request)).toBe(false);
    expect(answersRequest({ id: null, result: {} }, request)).toBe(false);
    expect(answersRequest({ result: {} }, request)).toBe(false);
    expect(answersRequest({ id: null, result: {} }, { jsonrpc: '2.0', method: 'GetTask', id: null })).toBe(true);
  });
});

describe('isEventStream', () => {
  it('reads the media type of Content-Type, as the MCP SDK does', () => {
    const typed = (type?: string) => new Response(null, type ? { headers: { 'content-type': type } } : {});
    expect(isEventStream(typed('text/event-stream'))).toBe(true);
    expect(isEventStream(typed('Text/Event-Stream; charset=utf-8'))).toBe(true);
    expect(isEventStream(typed('application/json'))).toBe(false);
    expect(isEventStream(typed('text/plain; a=text/event-stream'))).toBe(false);
    expect(isEventStream(typed())).toBe(false);
  });
});
