// The typed API client: paths and bodies come from docs/openapi.yaml
// (api.gen.ts), so a change of the API that breaks the page fails its
// type check. Every POST carries an Idempotency-Key, so a double click or a
// retry applies once.
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './api.gen';
import { ApiError } from './problem';
import type { Problem } from './types';

export type Client = ReturnType<typeof createClient<paths>>;

/** A fresh key for one user action; reuse it to retry that action. */
export function newKey(): string {
  return crypto.randomUUID();
}

export interface Auth {
  token: () => string | null;
}

export function apiClient(baseUrl: string, auth: Auth): Client {
  const client = createClient<paths>({ baseUrl });
  const bearer: Middleware = {
    onRequest({ request }) {
      const token = auth.token();
      if (token) request.headers.set('authorization', `Bearer ${token}`);
      if (request.method === 'POST' && !request.headers.has('idempotency-key')) {
        request.headers.set('idempotency-key', newKey());
      }
      return request;
    },
  };
  client.use(bearer);
  return client;
}

/** The data of a call, or an [`ApiError`] with the server's problem. */
export async function unwrap<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await call;
  } catch {
    throw new ApiError(0, null);
  }
  if (result.response.ok && result.data !== undefined) return result.data;
  const problem = isProblem(result.error) ? result.error : null;
  throw new ApiError(result.response.status, problem);
}

function isProblem(value: unknown): value is Problem {
  return typeof value === 'object' && value !== null && 'detail' in value && 'status' in value;
}
