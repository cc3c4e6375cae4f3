// The page's credential (docs/protocol.md, "Authentication"). A browser
// holds no token and no cookie: the address `termkeep url` prints (and a
// share link) carries the token in its fragment, #token=…, which reaches
// no server. The page drops it from the address at once and swaps it for
// a credential of its own (POST /api/browser-sessions), kept in this
// origin's localStorage so new tabs are signed in too, and sent as
// Authorization: Bearer on every fetch and as a WebSocket subprotocol.
//
// A link for someone else (another user, a narrower scope) never replaces
// the credential silently: a page of any site can send this browser to
// /#token=… (login CSRF), so the user is asked first.

const CRED_KEY = 'termkeep.credential';
/** The WebSocket subprotocol a viewer speaks; the server selects it. */
export const WS_PROTOCOL = 'termkeep.v1';
const WS_AUTH = 'termkeep.auth.';

interface Stored {
  id: string;
  credential: string;
}

/** Who a secret acts as: GET /api/me. */
export interface Principal {
  user: string;
  owner: boolean;
  read_only: boolean;
  session: string;
  workspace: string;
  can_create: boolean;
}

function load(): Stored | null {
  try {
    const v = JSON.parse(localStorage.getItem(CRED_KEY) ?? 'null') as Stored | null;
    return v && typeof v.id === 'string' && typeof v.credential === 'string' ? v : null;
  } catch {
    return null;
  }
}

function store(v: Stored | null): void {
  try {
    if (v) localStorage.setItem(CRED_KEY, JSON.stringify(v));
    else localStorage.removeItem(CRED_KEY);
  } catch {
    // storage refused (private mode, full): this tab still works
  }
  current = v;
}

let current: Stored | null = load();

// Another tab signed in, switched or signed out: follow it. A switch to
// someone else starts this page over as them, since what it shows is the
// other one's.
window.addEventListener('storage', (e) => {
  if (e.key !== CRED_KEY && e.key !== null) return;
  const before = current;
  current = load();
  if (before && current && current.id !== before.id) location.reload();
});

/** credentialId is the id of this page's credential ('' when signed out). */
export function credentialId(): string {
  return current?.id ?? '';
}

/** authHeaders are the headers that authenticate a fetch of this page. */
export function authHeaders(): Record<string, string> {
  return current ? { Authorization: `Bearer ${current.credential}` } : {};
}

/** wsProtocols are the subprotocols a viewer offers: the credential goes with them, and only WS_PROTOCOL is selected. */
export function wsProtocols(): string[] {
  return current ? [WS_PROTOCOL, WS_AUTH + current.credential] : [WS_PROTOCOL];
}

async function me(secret: string): Promise<Principal | null> {
  try {
    const r = await fetch('/api/me', { headers: { Authorization: `Bearer ${secret}`, Accept: 'application/json' }, cache: 'no-store' });
    return r.ok ? ((await r.json()) as Principal) : null;
  } catch {
    return null;
  }
}

/** describe says in words who a principal is, for the switch question. */
export function describe(p: Principal): string {
  const who = p.owner ? `${p.user || 'the owner'} (the owner)` : p.user || 'no one';
  const scope = p.session
    ? `one session (${p.session})`
    : p.workspace
      ? `workspace ${p.workspace}`
      : p.owner
        ? 'every session'
        : `all of ${p.user}'s sessions`;
  return `${who}, reaching ${scope}${p.read_only ? ', read-only' : ''}`;
}

function same(a: Principal, b: Principal): boolean {
  return a.user === b.user && a.owner === b.owner && a.read_only === b.read_only && a.session === b.session && a.workspace === b.workspace;
}

async function exchange(token: string): Promise<boolean> {
  let r: Response;
  try {
    r = await fetch('/api/browser-sessions', {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' },
      cache: 'no-store',
    });
  } catch {
    return false;
  }
  if (r.status !== 201) return false;
  const v = (await r.json()) as { id: string; credential: string };
  store({ id: v.id, credential: v.credential });
  return true;
}

/** revoke revokes a credential of this browser's (best effort: the server may be gone). */
async function revoke(v: Stored): Promise<void> {
  await fetch(`/api/browser-sessions/${encodeURIComponent(v.id)}`, {
    method: 'DELETE',
    headers: { Authorization: `Bearer ${v.credential}` },
    cache: 'no-store',
  }).catch(() => undefined);
}

/**
 * takeFragmentToken removes token=… from the address's fragment, keeping
 * anything else there (#replay=…), and returns it.
 */
function takeFragmentToken(): string | null {
  const h = new URLSearchParams(location.hash.slice(1));
  const token = h.get('token');
  if (token === null) return null;
  h.delete('token');
  const rest = h.toString();
  history.replaceState(history.state, '', location.pathname + location.search + (rest ? `#${rest}` : ''));
  return token;
}

/** What signing in came to: signed in (switched: to another principal than before), or why not. */
export type SignIn = { ok: true; switched: boolean } | { ok: false; why: 'none' | 'refused' | 'unreachable' };

/**
 * signIn runs once at start: it takes a token from the fragment and swaps
 * it for a credential, unless the page already holds one for someone else
 * and confirm (shown who each is) says to keep it.
 */
export async function signIn(confirm: (now: Principal, link: Principal) => Promise<boolean>): Promise<SignIn> {
  const token = takeFragmentToken();
  if (token === null || token === '') return current ? { ok: true, switched: false } : { ok: false, why: 'none' };
  const held = current;
  const now = held ? await me(held.credential) : null;
  if (now) {
    const link = await me(token);
    if (!link || same(now, link) || !(await confirm(now, link))) return { ok: true, switched: false };
  }
  // A link that does not work leaves a working sign-in as it was.
  if (!(await exchange(token))) return now ? { ok: true, switched: false } : { ok: false, why: 'refused' };
  if (held) void revoke(held);
  return { ok: true, switched: held !== null };
}

/** signOut revokes this page's credential and forgets it, in every tab of this origin. */
export async function signOut(): Promise<void> {
  const held = current;
  store(null);
  if (held) await revoke(held);
}

/** forget drops a credential the server no longer takes (expired, revoked). */
export function forget(): void {
  store(null);
}
