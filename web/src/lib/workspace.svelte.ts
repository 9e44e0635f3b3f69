// The page's state and every call it makes. Components read these fields
// and call these methods; nothing else talks to the API.
import { apiClient, newKey, unwrap, type Client } from './api';
import type { PageConfig, Session } from './auth';
import { saveSession } from './auth';
import { ApiError, describe } from './problem';
import { check, errorsOf, isEmpty, profileOf, type ProfileDraft, type ProfileErrors } from './profile';
import { streamTurn } from './stream';
import type {
  CardState,
  ClientEvent,
  CourseSummary,
  CourseUnit,
  DrillCard,
  ExamCard,
  Mode,
  SnapshotLite,
  StudentProfile,
  ThreadStateView,
  ThreadSummary,
  TurnDebug,
  TutorMessage,
  UnitLine,
} from './types';
import { tagged } from './types';

export interface OpenThread {
  threadId: string;
  courseId: string;
  mode: Mode;
  messages: TutorMessage[];
  /** Each card's state by message id: read back, or set by this page. */
  states: Record<string, CardState>;
  /** The memo or video of an exam card, once opened. */
  supports: Record<string, { memo?: string; videoUrl?: string }>;
  snapshotLite: SnapshotLite | null;
  state: ThreadStateView | null;
  debug: TurnDebug | null;
}

/** A turn that failed, kept so Retry sends it again with the same key. */
interface FailedTurn {
  body: TurnBody;
  key: string;
  shown: string;
}

export interface TurnBody {
  messageText?: string;
  messageLatex?: string;
  clientEvent?: ClientEvent;
}

export class Workspace {
  readonly config: PageConfig;
  readonly client: Client;
  session = $state<Session | null>(null);
  courses = $state<CourseSummary[]>([]);
  threads = $state<ThreadSummary[]>([]);
  thread = $state<OpenThread | null>(null);
  /** A turn on its way: the student's words shown while the tutor answers. */
  pendingTurn = $state<string | null>(null);
  /** The tutor's words so far while they stream in; the stored reply replaces them. */
  streamingText = $state<string | null>(null);
  failedTurn = $state<FailedTurn | null>(null);
  /** Errors shown next to what caused them. */
  composerError = $state<string | null>(null);
  cardErrors = $state<Record<string, string>>({});
  cardBusy = $state<Record<string, string>>({});
  pageError = $state<string | null>(null);
  loading = $state(false);
  /** Bumped to put the cursor in the composer ("Ask follow-up"). */
  focusComposer = $state(0);
  /** Each course's units in teaching order, once asked for (the unit picker). */
  units = $state<Record<string, CourseUnit[]>>({});
  /** Each course's student's focus unit, read with its units. */
  focusUnit = $state<Record<string, string>>({});
  /** Modes the server refused to create a thread in, by course: not offered again. */
  refusedModes = $state<Record<string, Mode[]>>({});
  /** Why the last "Start" did not start a session, shown in the form. */
  newSessionError = $state<string | null>(null);
  /** The student's saved profile (`{}` before they save one); null until read. */
  profile = $state<StudentProfile | null>(null);
  /** The profile could not be read: the page does not offer the form unasked. */
  profileUnread = $state(false);
  /** Why the last save failed, next to the field the API named. */
  profileErrors = $state<ProfileErrors>({});
  profileSaving = $state(false);
  /** The student chose "Skip for now": the form is not offered again on sign-in. */
  profileSkipped = $state(false);
  /** Each course's units with the student's mastery, from the report card. */
  unitLines = $state<Record<string, UnitLine[]>>({});
  /** Counts thread opens and new sessions, so only the latest one's answer is shown. */
  private opening = 0;
  /** Counts report reads per course, so a slow one does not overwrite a newer one. */
  private reading: Record<string, number> = {};

  constructor(config: PageConfig, session: Session | null) {
    this.config = config;
    this.session = session;
    this.client = apiClient(config.apiBaseUrl, { token: () => this.session?.token ?? null });
  }

  signIn(session: Session): void {
    saveSession(session);
    this.session = session;
  }

  signOut(): void {
    saveSession(null);
    this.session = null;
    this.thread = null;
    this.threads = [];
    this.profile = null;
    this.profileErrors = {};
    this.unitLines = {};
  }

  /** Handles an error everywhere alike: an expired sign-in signs out. */
  private fail(error: unknown): string {
    if (error instanceof ApiError && error.signInAgain) {
      this.signOut();
      this.pageError = describe(error);
    }
    return describe(error);
  }

  async start(): Promise<void> {
    this.pageError = null;
    try {
      const [courses, threads] = await Promise.all([
        unwrap(this.client.GET('/courses')),
        unwrap(this.client.GET('/me/threads', { params: { query: { limit: 50 } } })),
      ]);
      this.courses = courses.courses;
      this.threads = threads.threads;
    } catch (e) {
      this.pageError = this.fail(e);
      return;
    }
    await this.loadProfile();
  }

  /** True when nothing is saved yet: the page offers the form on sign-in. */
  get profileMissing(): boolean {
    return !this.profileUnread && this.profile !== null && isEmpty(this.profile);
  }

  skipProfile(): void {
    this.profileSkipped = true;
    try {
      localStorage.setItem(this.skipKey, '1');
    } catch {
      // Private browsing: skipped for this visit only.
    }
  }

  private get skipKey(): string {
    return `tutorflow.profile-skipped.${this.session?.studentId ?? ''}`;
  }

  async loadProfile(): Promise<void> {
    try {
      this.profileSkipped = localStorage.getItem(this.skipKey) === '1';
    } catch {
      this.profileSkipped = false;
    }
    try {
      this.profile = await unwrap(this.client.GET('/me/profile'));
      this.profileUnread = false;
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) {
        this.profile = {};
        this.profileUnread = false;
      } else {
        // The page works without it; the form says so when opened.
        this.profileUnread = true;
        this.fail(e);
      }
    }
  }

  /** Saves the whole profile; false with `profileErrors` set when it was not saved. */
  async saveProfile(draft: ProfileDraft): Promise<boolean> {
    const errors = check(draft);
    this.profileErrors = errors;
    if (Object.keys(errors).length > 0 || this.profileSaving) return false;
    this.profileSaving = true;
    try {
      this.profile = await unwrap(
        this.client.PUT('/me/profile', { body: profileOf(draft), headers: { 'idempotency-key': newKey() } }),
      );
      this.profileUnread = false;
      return true;
    } catch (e) {
      this.fail(e);
      this.profileErrors = errorsOf(e);
      return false;
    } finally {
      this.profileSaving = false;
    }
  }

  /** The student's mastery of a unit in [0, 1], once the report card was read. */
  masteryOf(courseId: string, unitId: string): number | null {
    return this.unitLines[courseId]?.find((u) => u.unitId === unitId)?.masteryProbability ?? null;
  }

  /** Reads the course's report card again for the mastery it shows. */
  private async refreshReport(courseId: string): Promise<void> {
    const reading = (this.reading[courseId] = (this.reading[courseId] ?? 0) + 1);
    try {
      const report = await unwrap(
        this.client.GET('/me/courses/{courseId}/report', { params: { path: { courseId } } }),
      );
      if (reading === this.reading[courseId]) this.unitLines[courseId] = report.units;
    } catch {
      // The mastery bar is extra; the panel shows the tier without it.
    }
  }

  private async refreshThreads(): Promise<void> {
    try {
      const threads = await unwrap(this.client.GET('/me/threads', { params: { query: { limit: 50 } } }));
      this.threads = threads.threads;
    } catch {
      // The list is a convenience; the conversation carries on.
    }
  }

  courseTitle(courseId: string): string {
    return this.courses.find((c) => c.courseId === courseId)?.title ?? courseId;
  }

  /** The modes a new session of the course can be started in. */
  modesOf(course: CourseSummary): Mode[] {
    const refused = this.refusedModes[course.courseId] ?? [];
    return course.modes.filter((m) => !refused.includes(m));
  }

  /** Reads the course's units for the unit picker (once per course). */
  async loadUnits(courseId: string): Promise<void> {
    if (this.units[courseId]) return;
    try {
      const course = await unwrap(this.client.GET('/courses/{courseId}', { params: { path: { courseId } } }));
      this.units[courseId] = course.units;
      this.focusUnit[courseId] = course.snapshotLite.focus.unitId;
    } catch (e) {
      this.newSessionError = this.fail(e);
    }
  }

  async newThread(courseId: string, mode: Mode, goal: string | null, unitId: string | null = null): Promise<void> {
    ++this.opening;
    this.loading = true;
    this.pageError = null;
    this.newSessionError = null;
    try {
      const created = await unwrap(
        this.client.POST('/threads', {
          body: { courseId, mode, ...(goal ? { goal } : {}), ...(unitId ? { unitId } : {}) },
        }),
      );
      this.thread = {
        threadId: created.threadId,
        courseId,
        mode: created.mode,
        messages: tagged(created.messages),
        states: {},
        supports: {},
        snapshotLite: created.snapshotLite,
        state: created.state,
        debug: null,
      };
      this.failedTurn = null;
      this.composerError = null;
      void this.refreshReport(courseId);
      await this.refreshThreads();
    } catch (e) {
      if (e instanceof ApiError && e.status === 422 && e.kind === 'mode-disabled') {
        // The course switched the mode off since the catalog was read: stop offering it.
        this.refusedModes[courseId] = [...(this.refusedModes[courseId] ?? []), mode];
        this.newSessionError = "That kind of session isn't available for this course. Pick another one.";
      } else {
        this.newSessionError = this.fail(e);
      }
    } finally {
      this.loading = false;
    }
  }

  /** Reads a conversation back, every page of it, cards with their states. */
  async openThread(threadId: string): Promise<void> {
    const opening = ++this.opening;
    this.loading = true;
    this.pageError = null;
    try {
      const messages: TutorMessage[] = [];
      let cursor: string | null = null;
      let replay;
      do {
        replay = await unwrap(
          this.client.GET('/threads/{threadId}', {
            params: { path: { threadId }, query: { limit: 100, ...(cursor ? { cursor } : {}) } },
          }),
        );
        messages.push(...tagged(replay.messages));
        cursor = replay.nextCursor ?? null;
      } while (cursor);
      const states: Record<string, CardState> = {};
      const supports: OpenThread['supports'] = {};
      for (const m of messages) {
        if (m.cardState) states[m.id] = m.cardState;
        if (m.cardState?.type === 'EXAM' && m.cardState.memo) supports[m.id] = { memo: m.cardState.memo };
      }
      const report = await unwrap(
        this.client.GET('/me/courses/{courseId}/report', { params: { path: { courseId: replay.courseId } } }),
      );
      // A later open, or a new session, overtook this one: its answer is stale.
      if (opening !== this.opening) return;
      if (report.units) this.unitLines[replay.courseId] = report.units;
      this.thread = {
        threadId,
        courseId: replay.courseId,
        mode: replay.mode,
        messages,
        states,
        supports,
        snapshotLite: report.snapshotLite,
        state: replay.state,
        debug: null,
      };
      this.failedTurn = null;
      this.composerError = null;
      this.cardErrors = {};
    } catch (e) {
      if (opening === this.opening) this.pageError = this.fail(e);
    } finally {
      if (opening === this.opening) this.loading = false;
    }
  }

  /** Sends a turn: a message, a card's button, or both. */
  async turn(body: TurnBody, shown: string | null, key = newKey()): Promise<boolean> {
    const thread = this.thread;
    if (!thread || this.pendingTurn !== null) return false;
    this.pendingTurn = shown ?? '';
    this.composerError = null;
    this.failedTurn = null;
    try {
      const token = this.session?.token;
      const { response: reply } = await streamTurn(
        `${this.config.apiBaseUrl}/threads/${encodeURIComponent(thread.threadId)}/turn`,
        { 'idempotency-key': key, ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body,
        (text) => (this.streamingText = (this.streamingText ?? '') + text),
      );
      thread.messages.push(...tagged(reply.messages));
      thread.snapshotLite = reply.snapshotLite;
      thread.state = reply.state;
      thread.debug = reply.debug ?? null;
      void this.refreshThreads();
      void this.refreshReport(thread.courseId);
      return true;
    } catch (e) {
      this.composerError = this.fail(e);
      this.failedTurn = { body, key, shown: shown ?? '' };
      return false;
    } finally {
      this.pendingTurn = null;
      this.streamingText = null;
    }
  }

  retryTurn(): void {
    const failed = this.failedTurn;
    if (failed) void this.turn(failed.body, failed.shown || null, failed.key);
  }

  private async onCard<T>(messageId: string, label: string, call: () => Promise<T>): Promise<T | null> {
    if (this.cardBusy[messageId]) return null;
    this.cardBusy[messageId] = label;
    delete this.cardErrors[messageId];
    try {
      return await call();
    } catch (e) {
      this.cardErrors[messageId] = this.fail(e);
      return null;
    } finally {
      delete this.cardBusy[messageId];
    }
  }

  async gradeDrill(messageId: string, card: DrillCard, answer: string, startedAt: number): Promise<void> {
    const thread = this.thread;
    if (!thread || !card.drillToken) return;
    const key = newKey();
    const graded = await this.onCard(messageId, 'Checking…', () =>
      unwrap(
        this.client.POST('/threads/{threadId}/drill/grade', {
          params: { path: { threadId: thread.threadId } },
          headers: { 'idempotency-key': key },
          body: {
            drillToken: card.drillToken!,
            studentAnswer: answer,
            responseTimeMs: Math.max(0, Math.round(performance.now() - startedAt)),
          },
        }),
      ),
    );
    if (!graded) return;
    thread.snapshotLite = graded.snapshotLite;
    void this.refreshReport(thread.courseId);
    if (graded.result === 'unverifiable') {
      this.cardErrors[messageId] = graded.feedbackText;
      return;
    }
    thread.states[messageId] = {
      type: 'DRILL',
      answer,
      result: graded.result,
      isCorrect: graded.isCorrect,
      feedbackText: graded.feedbackText,
      ...(graded.correctAnswer ? { correctAnswer: graded.correctAnswer } : {}),
    };
  }

  async submitExam(messageId: string, card: ExamCard, option: string): Promise<void> {
    const thread = this.thread;
    if (!thread) return;
    const key = newKey();
    const submitted = await this.onCard(messageId, 'Submitting…', () =>
      unwrap(
        this.client.POST('/threads/{threadId}/exam/mcq-submit', {
          params: { path: { threadId: thread.threadId } },
          headers: { 'idempotency-key': key },
          body: {
            questionId: card.questionId,
            selectedOption: option,
            unitId: card.unitId,
            difficultyTier: card.tier,
          },
        }),
      ),
    );
    if (!submitted) return;
    thread.snapshotLite = submitted.snapshotLite;
    void this.refreshReport(thread.courseId);
    const previous = thread.states[messageId];
    thread.states[messageId] = {
      ...(previous?.type === 'EXAM' ? previous : {}),
      type: 'EXAM',
      status: submitted.isCorrect ? 'passed' : 'failed',
      selectedOption: option,
      feedbackText: submitted.feedbackText,
      ...(submitted.lockedUntil ? { lockedUntil: submitted.lockedUntil } : {}),
    };
  }

  async viewSupport(messageId: string, card: ExamCard, supportType: 'memo' | 'video'): Promise<void> {
    const thread = this.thread;
    if (!thread) return;
    const key = newKey();
    const viewed = await this.onCard(messageId, supportType === 'memo' ? 'Opening the memo…' : 'Opening the video…', () =>
      unwrap(
        this.client.POST('/threads/{threadId}/exam/support-viewed', {
          params: { path: { threadId: thread.threadId } },
          headers: { 'idempotency-key': key },
          body: { questionId: card.questionId, supportType, unitId: card.unitId },
        }),
      ),
    );
    if (!viewed) return;
    thread.snapshotLite = viewed.snapshotLite;
    thread.supports[messageId] = {
      ...thread.supports[messageId],
      ...(viewed.memo ? { memo: viewed.memo } : {}),
      ...(viewed.videoUrl ? { videoUrl: viewed.videoUrl } : {}),
    };
    const previous = thread.states[messageId];
    const before = previous?.type === 'EXAM' ? previous : null;
    thread.states[messageId] = {
      type: 'EXAM',
      status: before?.status ?? 'locked',
      ...(before?.selectedOption ? { selectedOption: before.selectedOption } : {}),
      ...(before?.feedbackText ? { feedbackText: before.feedbackText } : {}),
      ...(viewed.lockedUntil ? { lockedUntil: viewed.lockedUntil } : {}),
      supportsViewed: [...new Set([...(before?.supportsViewed ?? []), supportType])],
      ...(viewed.memo ? { memo: viewed.memo } : {}),
    };
    if (viewed.videoUrl) window.open(viewed.videoUrl, '_blank', 'noopener');
  }

  /** Voice: audio in the body, or uploaded first when it is too large. */
  async transcribe(audio: Blob): Promise<string> {
    const type = audio.type.split(';')[0] || 'audio/webm';
    const inline = await this.client.POST('/transcribe', {
      body: audio as never,
      bodySerializer: (b: unknown) => b as Blob,
      headers: { 'content-type': type },
    });
    if (inline.response.status !== 413) {
      return (await unwrap(Promise.resolve(inline))).text;
    }
    const ticket = await unwrap(
      this.client.POST('/transcribe/uploads', { body: { contentType: type, sizeBytes: audio.size } }),
    );
    const put = await fetch(ticket.uploadUrl, { method: 'PUT', headers: ticket.headers, body: audio });
    if (!put.ok) throw new ApiError(put.status, null);
    const done = await unwrap(this.client.POST('/transcribe', { body: { key: ticket.key } }));
    return done.text;
  }
}
