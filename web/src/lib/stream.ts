// A streamed turn: POST with `Accept: text/event-stream`, the tutor's words
// handed to `onText` as they arrive, and the stored response at the end —
// `final` when it is what streamed, `replaced` when the server swapped in
// another reply (the page must replace what it showed either way). A
// refusal before the stream is problem+json, as for any other call.
import { ApiError } from './problem';
import type { Problem, TurnResponse } from './types';

export interface StreamedTurn {
  response: TurnResponse;
  replaced: boolean;
}

/** One Server-Sent Event. */
export interface SseEvent {
  event: string;
  data: string;
}

/** Splits event-stream text into events; `rest` is an unfinished event. */
export function parseEvents(text: string): { events: SseEvent[]; rest: string } {
  const events: SseEvent[] = [];
  const blocks = text.replace(/\r\n?/g, '\n').split('\n\n');
  const rest = blocks.pop() ?? '';
  for (const block of blocks) {
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length) events.push({ event, data: data.join('\n') });
  }
  return { events, rest };
}

export async function streamTurn(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  onText: (text: string) => void,
): Promise<StreamedTurn> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, null);
  }
  const type = response.headers.get('content-type') ?? '';
  if (!response.ok || !type.startsWith('text/event-stream') || !response.body) {
    const json: unknown = await response.json().catch(() => null);
    // A server that does not stream answers with the whole response.
    if (response.ok && json) return { response: json as TurnResponse, replaced: false };
    throw new ApiError(response.status, json as Problem | null);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    let chunk: ReadableStreamReadResult<string>;
    try {
      chunk = await reader.read();
    } catch {
      throw new ApiError(0, null);
    }
    if (chunk.done) break;
    const { events, rest } = parseEvents(buffered + chunk.value);
    buffered = rest;
    for (const e of events) {
      if (e.event === 'delta') onText((JSON.parse(e.data) as { text: string }).text);
      else if (e.event === 'final' || e.event === 'replaced') {
        return { response: JSON.parse(e.data) as TurnResponse, replaced: e.event === 'replaced' };
      } else if (e.event === 'error') {
        const problem = JSON.parse(e.data) as Problem;
        throw new ApiError(problem.status, problem);
      }
    }
  }
  // The connection closed before the end: the turn may still have been
  // stored, and a retry with the same key returns it.
  throw new ApiError(0, null);
}
