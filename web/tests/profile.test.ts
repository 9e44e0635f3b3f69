import { flushSync, mount, tick, unmount } from 'svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';
import ProfileForm from '../src/components/ProfileForm.svelte';
import SnapshotPanel from '../src/components/SnapshotPanel.svelte';
import { exampleThemeValues, languageLevelValues, tutorLanguageValues } from '../src/lib/api.gen';
import type { PageConfig } from '../src/lib/auth';
import { masteryPercent, masteryWords, tierHint } from '../src/lib/mastery';
import { ApiError } from '../src/lib/problem';
import {
  check,
  draftOf,
  errorsOf,
  fieldOf,
  isEmpty,
  languageLevels,
  languages,
  profileOf,
  themes,
  type ProfileDraft,
} from '../src/lib/profile';
import type { SnapshotLite, StudentProfile } from '../src/lib/types';
import { Workspace } from '../src/lib/workspace.svelte';

const config: PageConfig = { apiBaseUrl: 'http://api.test', auth: 'dev', transcription: false, debug: false };
const session = () => ({ studentId: `ana-${Math.random()}`, token: 'tok', expiresAt: Date.now() + 3_600_000 });

const json = (body: unknown, status = 200, type = 'application/json') =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': type } });
const problem = (status: number, detail: string, field?: string) =>
  json(
    { type: 'urn:tutorflow:problem:invalid-body', title: 'Invalid body', status, detail, instance: '/me/profile', requestId: 'r1', ...(field ? { field } : {}) },
    status,
    'application/problem+json',
  );

const draft = (changes: Partial<ProfileDraft> = {}): ProfileDraft => ({ ...draftOf({}), ...changes });

let mounted: ReturnType<typeof mount> | null = null;
afterEach(() => {
  vi.unstubAllGlobals();
  if (mounted) unmount(mounted);
  mounted = null;
  document.body.innerHTML = '';
});

/** A `/me/profile` that keeps what is PUT, answering `reply` instead when given. */
function profileServer(initial: Response | StudentProfile, reply?: () => Response) {
  let saved: StudentProfile | null = initial instanceof Response ? null : initial;
  const requests: { method: string; body: unknown; headers: Headers }[] = [];
  const fetch = vi.fn(async (request: Request) => {
    const { pathname } = new URL(request.url);
    if (pathname !== '/me/profile') return json({ type: 'about:blank', title: 'Not Found', status: 404 }, 404);
    const body = request.method === 'PUT' ? await request.json() : null;
    requests.push({ method: request.method, body, headers: request.headers });
    if (request.method === 'GET') return saved ? json(saved) : (initial as Response).clone();
    if (reply) return reply();
    saved = body as StudentProfile;
    return json(saved);
  });
  vi.stubGlobal('fetch', fetch);
  return { requests, fetch };
}

describe('the form state', () => {
  it('offers the values the API document lists, each with a name', () => {
    expect(themes.map((t) => t.value)).toEqual([...exampleThemeValues]);
    expect(languages.map((l) => l.value)).toEqual([...tutorLanguageValues]);
    expect(languageLevels.map((l) => l.value).sort()).toEqual([...languageLevelValues].sort());
    expect(languageLevels.map((l) => l.value)).toEqual(['simple', 'standard', 'advanced']);
    expect(languages.find((l) => l.value === 'es')?.name).toBe('Español');
    expect(themes.find((t) => t.value === 'sports')?.name).toBe('Sports');
  });

  it('turns a saved profile into fields and back, blanks as cleared', () => {
    const saved: StudentProfile = {
      name: 'Ana',
      age: 13,
      grade: 8,
      languageLevel: 'simple',
      exampleThemes: ['sports', 'music'],
      language: 'es',
      aboutMe: null,
    };
    const fields = draftOf(saved);
    expect(fields).toMatchObject({ name: 'Ana', age: '13', grade: '8', language: 'es', aboutMe: '' });
    expect(profileOf(fields)).toEqual(saved);
    expect(profileOf(draft({ name: '  Leo  ', aboutMe: '   ' }))).toEqual({
      name: 'Leo',
      age: null,
      grade: null,
      languageLevel: null,
      exampleThemes: [],
      language: null,
      aboutMe: null,
    });
  });

  it('knows an unsaved profile: {} from the API, or only blanks', () => {
    expect(isEmpty({})).toBe(true);
    expect(isEmpty({ name: null, exampleThemes: [] })).toBe(true);
    expect(isEmpty({ language: 'en' })).toBe(false);
  });

  it('catches what it can before asking the server, by field', () => {
    expect(check(draft({ name: 'Ana' }))).toEqual({});
    expect(check(draft({ name: 'x'.repeat(41) })).name).toMatch(/40 characters/);
    expect(check(draft({ exampleThemes: ['sports', 'music', 'art', 'space'] })).exampleThemes).toMatch(/up to 3/);
    expect(check(draft({ aboutMe: 'y'.repeat(301) })).aboutMe).toMatch(/300/);
  });

  it("puts the API's problem next to the field it names", () => {
    expect(fieldOf('age')).toBe('age');
    expect(fieldOf('exampleThemes[1]')).toBe('exampleThemes');
    expect(fieldOf('student.name')).toBe('name');
    expect(fieldOf('idempotency-key')).toBeNull();
    expect(fieldOf(undefined)).toBeNull();
    const outOfRange = new ApiError(400, {
      type: 'urn:tutorflow:problem:invalid-body', title: 'Invalid body', status: 400,
      detail: 'age 19 is outside 8 to 18', instance: '/me/profile', requestId: 'r', field: 'age',
    });
    expect(errorsOf(outOfRange)).toEqual({ age: 'Age 19 is outside 8 to 18' });
    expect(errorsOf(new ApiError(0, null))).toEqual({ form: expect.stringMatching(/Can't reach the tutor/) });
  });
});

describe('reading and saving the profile', () => {
  it('offers the form when nothing is saved: {} or a 404', async () => {
    for (const initial of [{}, json({ type: 'urn:tutorflow:problem:not-found', title: 'Not found', status: 404, detail: 'no profile' }, 404)]) {
      profileServer(initial);
      const ws = new Workspace(config, session());
      await ws.loadProfile();
      expect(ws.profile).toEqual({});
      expect(ws.profileMissing).toBe(true);
    }
  });

  it('does not offer the form when the profile cannot be read', async () => {
    profileServer(problem(503, 'the store is unavailable'));
    const ws = new Workspace(config, session());
    await ws.loadProfile();
    expect(ws.profileUnread).toBe(true);
    expect(ws.profileMissing).toBe(false);
  });

  it('saves the whole profile with a key, and keeps what the server answered', async () => {
    const { requests } = profileServer({});
    const ws = new Workspace(config, session());
    await ws.loadProfile();
    const ok = await ws.saveProfile(draft({ name: ' Ana ', exampleThemes: ['sports'], language: 'es' }));
    expect(ok).toBe(true);
    const put = requests.find((r) => r.method === 'PUT')!;
    expect(put.body).toEqual({ name: 'Ana', age: null, grade: null, languageLevel: null, exampleThemes: ['sports'], language: 'es', aboutMe: null });
    expect(put.headers.get('authorization')).toBe('Bearer tok');
    expect(put.headers.get('idempotency-key')).toMatch(/^[0-9a-f-]{36}$/);
    expect(ws.profile).toMatchObject({ name: 'Ana', language: 'es' });
    expect(ws.profileMissing).toBe(false);
    expect(ws.profileErrors).toEqual({});
    // Read back as saved: the form can be changed later.
    await ws.loadProfile();
    expect(draftOf(ws.profile)).toMatchObject({ name: 'Ana', exampleThemes: ['sports'], language: 'es' });
  });

  it('shows a refused field next to it and keeps the profile it had', async () => {
    profileServer({ name: 'Ana' }, () => problem(400, 'age 19 is outside 8 to 18', 'age'));
    const ws = new Workspace(config, session());
    await ws.loadProfile();
    expect(await ws.saveProfile(draft({ name: 'Ana', age: '19' }))).toBe(false);
    expect(ws.profileErrors).toEqual({ age: 'Age 19 is outside 8 to 18' });
    expect(ws.profile).toEqual({ name: 'Ana' });
    expect(ws.profileSaving).toBe(false);
  });

  it('does not send what the page already knows is wrong', async () => {
    const { fetch } = profileServer({});
    const ws = new Workspace(config, session());
    expect(await ws.saveProfile(draft({ name: 'n'.repeat(50) }))).toBe(false);
    expect(ws.profileErrors.name).toMatch(/40/);
    expect(fetch).not.toHaveBeenCalled();
  });

  it('the form marks the field the API refused and says saved after a save', async () => {
    let refuse = true;
    profileServer({}, () => (refuse ? problem(400, 'a name is one line, without tabs', 'name') : json({ name: 'Ana' })));
    const ws = new Workspace(config, session());
    await ws.loadProfile();
    const target = document.createElement('div');
    document.body.append(target);
    mounted = mount(ProfileForm, { target, props: { ws } });
    flushSync();
    const name = target.querySelector<HTMLInputElement>('#pf-name')!;
    expect(target.querySelector('label[for=pf-name]')?.textContent).toMatch(/call you/);
    name.value = 'Ana';
    name.dispatchEvent(new Event('input'));
    const form = target.querySelector('form')!;
    form.requestSubmit();
    await vi.waitFor(() => expect(target.querySelector('#pf-name-error')).not.toBeNull());
    expect(target.querySelector('#pf-name-error')?.textContent).toBe('A name is one line, without tabs');
    expect(name.getAttribute('aria-invalid')).toBe('true');
    expect(name.getAttribute('aria-describedby')).toBe('pf-name-error');
    refuse = false;
    form.requestSubmit();
    await vi.waitFor(() => expect(target.querySelector('[role=status]')?.textContent).toMatch(/Saved/));
    await tick();
    expect(target.querySelector('#pf-name-error')).toBeNull();
    expect(target.querySelector('[data-testid=profile-summary]')?.textContent).toMatch(/call you Ana/);
  });
});

describe('mastery in words', () => {
  it('reads a probability as a student would', () => {
    expect(masteryPercent(0.993)).toBe(99);
    expect(masteryPercent(0.9999)).toBe(99);
    expect(masteryPercent(1)).toBe(100);
    expect(masteryPercent(0.425)).toBe(42);
    expect(masteryWords(0.993)).toBe('Got it');
    expect(masteryWords(0.85)).toBe('Almost there');
    expect(masteryWords(0.1)).toBe('Just starting');
  });

  it('says what earns the next tier', () => {
    expect(tierHint('none')).toMatch(/exam question.*bronze/);
    expect(tierHint('bronze')).toMatch(/silver/);
    expect(tierHint('gold')).toMatch(/mastered/);
  });

  it('shows a unit known well without a tier, and why it has none', () => {
    const lite: SnapshotLite = {
      focus: { unitId: 'ratios', title: 'Ratios', masteryTier: 'none' },
      prereqNudge: null,
      revisit: { lockedCount: 0, nextEligibleAt: null, nextQuestionId: null },
      progress: { bronze: 0, silver: 0, gold: 0, total: 15 },
    };
    const target = document.createElement('div');
    document.body.append(target);
    mounted = mount(SnapshotPanel, { target, props: { lite, courseId: 'prealgebra', mastery: 0.993 } });
    flushSync();
    expect(target.querySelector('[data-testid=mastery]')?.textContent).toMatch(/Got it.*99%/s);
    expect(target.querySelector('.mastery-fill')?.getAttribute('style')).toMatch(/width: 99%/);
    expect(target.querySelector('[data-testid=tier-hint]')?.textContent).toMatch(/exam questions/);
    expect(target.querySelector('.focus .tier')?.textContent).toBe('No tier yet');
  });
});
