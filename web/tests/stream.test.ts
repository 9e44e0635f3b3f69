// @vitest-environment node
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../src/lib/problem';
import { parseEvents, streamTurn } from '../src/lib/stream';

const final = { turnId: 't1', messages: [{ id: 'm', role: 'assistant', text: 'Hello there' }] };

/** A fetch answering with `pieces` as an event stream, one read each. */
function serve(pieces: string[], init: ResponseInit = {}) {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const p of pieces) controller.enqueue(encoder.encode(p));
      controller.close();
    },
  });
  const fetch = vi.fn(async () => new Response(body, { headers: { 'content-type': 'text/event-stream' }, ...init }));
  vi.stubGlobal('fetch', fetch);
  return fetch;
}

afterEach(() => vi.unstubAllGlobals());

describe('event streams', () => {
  it('parses events split anywhere, keeping the unfinished rest', () => {
    const { events, rest } = parseEvents(': hi\r\nevent: delta\r\ndata: {"text":"a"}\r\n\r\ndata: x\ndata: y\n\nevent: fin');
    expect(events).toEqual([
      { event: 'delta', data: '{"text":"a"}' },
      { event: 'message', data: 'x\ny' },
    ]);
    expect(rest).toBe('event: fin');
  });

  it('hands out deltas and resolves with the final response', async () => {
    const whole = `event: delta\ndata: {"text":"Hello "}\n\nevent: delta\ndata: {"text":"there"}\n\nevent: final\ndata: ${JSON.stringify(final)}\n\n`;
    const fetch = serve([whole.slice(0, 17), whole.slice(17, 40), whole.slice(40)]);
    const seen: string[] = [];
    const done = await streamTurn('/threads/a/turn', { 'idempotency-key': 'k' }, { messageText: 'hi' }, (t) => seen.push(t));
    expect(seen).toEqual(['Hello ', 'there']);
    expect(done).toEqual({ response: final, replaced: false });
    const [, init] = fetch.mock.calls[0] as unknown as [string, RequestInit];
    expect((init.headers as Record<string, string>).accept).toBe('text/event-stream');
  });

  it('says when the final replaces what streamed', async () => {
    serve([`event: delta\ndata: {"text":"x"}\n\nevent: replaced\ndata: ${JSON.stringify(final)}\n\n`]);
    const done = await streamTurn('/t', {}, {}, () => {});
    expect(done.replaced).toBe(true);
  });

  it('throws the problem of an error event, and of a refusal before the stream', async () => {
    const problem = { type: 'urn:tutorflow:problem:internal', title: 'x', status: 500, detail: 'broke' };
    serve([`event: delta\ndata: {"text":"x"}\n\nevent: error\ndata: ${JSON.stringify(problem)}\n\n`]);
    await expect(streamTurn('/t', {}, {}, () => {})).rejects.toMatchObject({ status: 500, problem });
    vi.stubGlobal('fetch', vi.fn(async () => new Response(JSON.stringify({ ...problem, status: 404 }), { status: 404, headers: { 'content-type': 'application/problem+json' } })));
    await expect(streamTurn('/t', {}, {}, () => {})).rejects.toBeInstanceOf(ApiError);
  });

  it('treats a stream that ends early as unreachable, to retry with the same key', async () => {
    serve(['event: delta\ndata: {"text":"x"}\n\n']);
    await expect(streamTurn('/t', {}, {}, () => {})).rejects.toMatchObject({ status: 0 });
  });
});
