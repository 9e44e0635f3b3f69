// Turning problem+json errors (RFC 9457) into what a student reads.
import type { Problem } from './types';

/** An API failure: the server's problem, or the server unreachable. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem | null,
  ) {
    super(problem?.detail ?? `request failed (${status})`);
  }

  /** The token is missing, expired or not accepted: sign in again. */
  get signInAgain(): boolean {
    return this.status === 401;
  }

  /** Worth retrying as it was: the server was unreachable or busy. */
  get retryable(): boolean {
    return this.status === 0 || this.status === 503 || this.status === 409 && this.kind === 'conflict' && /retry/i.test(this.problem?.detail ?? '');
  }

  get kind(): string {
    return this.problem?.type.split(':').pop() ?? (this.status === 0 ? 'unreachable' : 'unknown');
  }
}

/** The sentence shown next to what caused the error. */
export function describe(error: unknown): string {
  if (!(error instanceof ApiError)) {
    return 'Something went wrong on this page. Try again.';
  }
  if (error.status === 0) {
    return "Can't reach the tutor right now. Check your connection and try again.";
  }
  if (error.status === 401) {
    return 'Your sign-in has expired. Sign in again to carry on.';
  }
  const detail = error.problem?.detail?.trim();
  if (error.kind === 'conflict' && detail && /locked until (\S+?);/.test(detail)) {
    return 'This question is locked for now; come back to it when the countdown ends.';
  }
  if (error.status >= 500 && error.status !== 503) {
    return 'The tutor had a problem answering. Try again in a moment.';
  }
  if (detail) {
    return detail.charAt(0).toUpperCase() + detail.slice(1);
  }
  return error.problem?.title ?? 'That did not work. Try again.';
}
