// @vitest-environment node
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { PageConfig } from '../src/lib/auth';
import { Workspace } from '../src/lib/workspace.svelte';

const config: PageConfig = { apiBaseUrl: 'http://api.test', auth: 'dev', transcription: false, debug: false };
const session = { studentId: 'ana', token: 'tok', expiresAt: Date.now() + 3_600_000 };

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/** A thread as GET /threads/{id} reads it back: one message naming it. */
const readBack = (threadId: string) => ({
  threadId,
  courseId: 'math',
  mode: 'guided',
  messages: [{ id: `${threadId}-m1`, role: 'assistant', text: `welcome to ${threadId}` }],
  state: null,
});

/**
 * A server whose answers for the threads named in `held` wait until
 * released, so a test can make an earlier request finish last.
 */
function server(held: string[]) {
  const releases = new Map<string, () => void>();
  const gates = new Map(held.map((id) => [id, new Promise<void>((r) => releases.set(id, r))]));
  const fetch = vi.fn(async (request: Request) => {
    const { pathname } = new URL(request.url);
    const opened = pathname.match(/^\/threads\/([^/]+)$/)?.[1];
    if (opened) {
      await gates.get(opened);
      return json(readBack(opened));
    }
    if (pathname.startsWith('/me/courses/')) return json({ snapshotLite: null });
    if (pathname === '/me/threads') return json({ threads: [] });
    if (pathname === '/threads' && request.method === 'POST') {
      return json({ threadId: 'created', mode: 'teach_me', messages: [], snapshotLite: null, state: null }, 201);
    }
    return json({ type: 'about:blank', title: 'Not Found', status: 404 }, 404);
  });
  vi.stubGlobal('fetch', fetch);
  return { release: (id: string) => releases.get(id)?.() };
}

afterEach(() => vi.unstubAllGlobals());

describe('opening threads', () => {
  it('shows the thread opened last when an earlier open answers after it', async () => {
    const { release } = server(['slow']);
    const ws = new Workspace(config, session);
    const slow = ws.openThread('slow');
    await ws.openThread('fast');
    expect(ws.thread?.threadId).toBe('fast');
    release('slow');
    await slow;
    expect(ws.thread?.threadId).toBe('fast');
    expect(ws.thread?.messages[0]?.text).toBe('welcome to fast');
    expect(ws.loading).toBe(false);
  });

  it('keeps a new session when an open started before it answers late', async () => {
    const { release } = server(['previous']);
    const ws = new Workspace(config, session);
    const previous = ws.openThread('previous');
    await ws.newThread('math', 'teach_me', null);
    expect(ws.thread?.threadId).toBe('created');
    release('previous');
    await previous;
    expect(ws.thread?.threadId).toBe('created');
    expect(ws.thread?.mode).toBe('teach_me');
  });

  it('still opens a thread when nothing overtakes it', async () => {
    const { release } = server(['only']);
    const ws = new Workspace(config, session);
    const only = ws.openThread('only');
    expect(ws.loading).toBe(true);
    release('only');
    await only;
    expect(ws.thread?.threadId).toBe('only');
    expect(ws.loading).toBe(false);
  });
});
