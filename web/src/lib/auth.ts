// Signing in. Locally `tutorflow serve` offers a development sign-in (any
// student id → an HS256 token). Deployed, the page signs in with the
// identity provider by the OAuth 2.0 authorization-code flow with PKCE
// (Cognito Hosted UI or any OIDC provider), configured in config.json.

export interface OidcConfig {
  /** The provider's issuer; its /.well-known/openid-configuration is read. */
  issuer: string;
  clientId: string;
  scope?: string;
  /** Send the access token (Cognito, API Gateway JWT authorizer) or the ID token. */
  token?: 'access' | 'id';
}

export interface PageConfig {
  apiBaseUrl: string;
  auth: 'dev' | 'oidc';
  transcription: boolean;
  debug: boolean;
  oidc?: OidcConfig;
}

export interface Session {
  studentId: string;
  token: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

const KEY = 'tutorflow.session';
const PKCE_KEY = 'tutorflow.pkce';

export function loadSession(now = Date.now()): Session | null {
  try {
    const session = JSON.parse(localStorage.getItem(KEY) ?? 'null') as Session | null;
    return session && session.expiresAt > now ? session : null;
  } catch {
    return null;
  }
}

export function saveSession(session: Session | null): void {
  if (session) localStorage.setItem(KEY, JSON.stringify(session));
  else localStorage.removeItem(KEY);
}

export async function loadConfig(): Promise<PageConfig> {
  const fallback: PageConfig = { apiBaseUrl: '', auth: 'dev', transcription: false, debug: false };
  try {
    const response = await fetch('/config.json', { cache: 'no-store' });
    return response.ok ? { ...fallback, ...((await response.json()) as Partial<PageConfig>) } : fallback;
  } catch {
    return fallback;
  }
}

/** The development sign-in of `tutorflow serve`. */
export async function devSignIn(baseUrl: string, studentId: string, staff: boolean): Promise<Session> {
  const response = await fetch(`${baseUrl}/dev/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ studentId, staff }),
  });
  const body = (await response.json().catch(() => null)) as
    | { token: string; studentId: string; expiresInSeconds: number; detail?: string }
    | null;
  if (!response.ok || !body?.token) {
    throw new Error(body?.detail ?? 'Signing in did not work. Try again.');
  }
  return {
    studentId: body.studentId,
    token: body.token,
    expiresAt: Date.now() + body.expiresInSeconds * 1000 - 60_000,
  };
}

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

interface Discovery {
  authorization_endpoint: string;
  token_endpoint: string;
}

async function discover(oidc: OidcConfig): Promise<Discovery> {
  const response = await fetch(`${oidc.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`);
  if (!response.ok) throw new Error('The sign-in provider cannot be reached.');
  return (await response.json()) as Discovery;
}

/** Sends the browser to the provider's sign-in page. */
export async function startOidcSignIn(oidc: OidcConfig): Promise<void> {
  const { authorization_endpoint } = await discover(oidc);
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(48)));
  const state = base64url(crypto.getRandomValues(new Uint8Array(16)));
  const challenge = base64url(
    new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))),
  );
  sessionStorage.setItem(PKCE_KEY, JSON.stringify({ verifier, state }));
  const url = new URL(authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: oidc.clientId,
    redirect_uri: location.origin + location.pathname,
    scope: oidc.scope ?? 'openid',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
  }).toString();
  location.assign(url.toString());
}

/** Completes a sign-in when the provider sent the browser back with a code. */
export async function finishOidcSignIn(oidc: OidcConfig): Promise<Session | null> {
  const params = new URLSearchParams(location.search);
  const code = params.get('code');
  const saved = JSON.parse(sessionStorage.getItem(PKCE_KEY) ?? 'null') as { verifier: string; state: string } | null;
  if (!code || !saved || params.get('state') !== saved.state) return null;
  sessionStorage.removeItem(PKCE_KEY);
  history.replaceState(null, '', location.pathname + location.hash);
  const { token_endpoint } = await discover(oidc);
  const response = await fetch(token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: location.origin + location.pathname,
      client_id: oidc.clientId,
      code_verifier: saved.verifier,
    }),
  });
  if (!response.ok) throw new Error('Signing in did not finish. Try again.');
  const tokens = (await response.json()) as { access_token: string; id_token?: string; expires_in: number };
  const token = oidc.token === 'id' && tokens.id_token ? tokens.id_token : tokens.access_token;
  const claims = JSON.parse(atob(token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))) as {
    sub: string;
    username?: string;
  };
  return {
    studentId: claims.username ?? claims.sub,
    token,
    expiresAt: Date.now() + tokens.expires_in * 1000 - 60_000,
  };
}
