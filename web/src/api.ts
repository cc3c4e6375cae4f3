// The REST API of the TCP listener (docs/protocol.md, "REST API"). Every
// call carries the page's credential as Authorization: Bearer (auth.ts);
// the browser attaches nothing by itself, so no other page can ride on it.

import { authHeaders } from './auth';

export interface Session {
  id: string;
  name: string;
  state: 'running' | 'exited' | 'closed' | 'interrupted' | string;
  pid: number | null;
  exit_code: number | null;
  reason?: string;
  /** Why an interrupted session ended, when the server knows: machine_restarted, holder_killed, stopped or shutdown; cause_text says it in words. */
  cause?: string;
  cause_text?: string;
  /** The restore policy brings it back (restore --all; auto-restore when asked for). */
  restorable?: boolean;
  command: string[];
  cwd: string;
  /** What could not be recovered of a session adopted from a damaged meta.json: command, cwd. */
  unknown?: string[];
  cols: number;
  rows: number;
  created_at: string;
  ended_at: string | null;
  first_offset: number;
  end_offset: number;
  viewers?: number;
  /** When a running session went quiet (likely waiting for input), RFC 3339; null while output flows. */
  quiet_since?: string | null;
  /** What its shell is doing, as shell integration's marks tell (a running session's). */
  shell?: Shell | null;
  /** What a running session is doing, where the server says: at_prompt, reading_terminal, waiting_on_events, running, starting, or (the kernel not asked) waiting. */
  activity?: { state: string } | null;
}

/** Shell is a session's shell as its OSC 133 marks tell: prompt, running or unknown, and the last command that ended. */
export interface Shell {
  state: 'prompt' | 'running' | 'unknown' | string;
  since?: string;
  command?: string;
  last?: {
    command?: string;
    status: number | null;
    ended_at: string;
    has_output: boolean;
    output_start: number;
    output_end: number;
  } | null;
}

/** Me is GET /api/me: who this page's token acts as, and what it may do. */
export interface Me {
  user: string;
  owner: boolean;
  read_only: boolean;
  /** The one session a share link reaches ('' for none). */
  session: string;
  workspace: string;
  /** Whether creating a session can succeed: false for a share link or a read-only token. */
  can_create: boolean;
}

export interface Event {
  id: number;
  at: string;
  kind: string;
  session: string;
  detail: Record<string, unknown>;
}

/** ApiError is a non-2xx answer; message is the server's sentence, code its reason on a 401 ("revoked", "expired"). */
export class ApiError extends Error {
  constructor(readonly status: number, message: string, readonly code?: string) {
    super(message);
  }
}

async function call<V>(method: string, path: string, body?: unknown): Promise<V> {
  const headers: Record<string, string> = { Accept: 'application/json', ...authHeaders() };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let r: Response;
  try {
    r = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, 'the termkeep server is not reachable');
  }
  if (r.status === 204) return undefined as V;
  const text = await r.text();
  let data: unknown = undefined;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text for the message
  }
  if (!r.ok) {
    const e = data as { error?: string; code?: string } | undefined;
    throw new ApiError(r.status, e?.error ?? (text || r.statusText), typeof e?.code === 'string' ? e.code : undefined);
  }
  return data as V;
}

/** A point of a session's time index: the byte at offset was logged at t (Unix ms). */
export interface ReplayPoint {
  offset: number;
  t: number;
}

/**
 * A moment worth finding on a replay's timeline: a command started
 * (`command`, OSC 133 C) or finished (`done`, OSC 133 D, with its status
 * when the mark has one), a restore, bytes the log lacks (`gap`, up to
 * `end`), or the wall clock set back or forward (`clock`, its label saying
 * by how much; the times stay the log's own, which a step does not move).
 */
export interface ReplayMarker {
  offset: number;
  t: number;
  kind: 'command' | 'done' | 'restore' | 'gap' | 'clock' | string;
  label?: string;
  status?: number;
  end?: number;
}

/** ReplayTimeline is GET /api/sessions/{ref}/replay: what a session's log holds, and when. */
export interface ReplayTimeline {
  id: string;
  state: string;
  first_offset: number;
  end_offset: number;
  start_t: number;
  end_t: number;
  cols: number;
  rows: number;
  points: ReplayPoint[];
  markers: ReplayMarker[];
}

/** ReplayScreen is a moment's screen: bytes that draw it on a freshly reset terminal of cols×rows. */
export interface ReplayScreen {
  data: Uint8Array;
  /** The screen reflects every byte below offset. */
  offset: number;
  /** The moment, Unix ms. */
  t: number;
  cols: number;
  rows: number;
}

/**
 * ReplayItem is one line of replay/output: the size in force from offset,
 * a logged chunk (data), or bytes the log lacks (offset up to end). t is
 * when it was logged, absent when the log does not say.
 */
export interface ReplayItem {
  offset: number;
  t?: number;
  cols?: number;
  rows?: number;
  data?: Uint8Array;
  end?: number;
  gap?: string;
}

/** ReplayOutput is one answer of replay/output: its items, where to continue, and whether that was the end. */
export interface ReplayOutput {
  items: ReplayItem[];
  next: number;
  done: boolean;
}

/**
 * GrepHit is a line of the log that matched: the bytes that drew its first
 * match, [offset, end), and when the last of them was logged.
 */
export interface GrepHit {
  offset: number;
  /** After the match's last byte (absent from servers of before). */
  end?: number;
  /** The end of the log chunk holding the match's last byte: a moment a terminal showed (absent from servers of before). */
  shown?: number;
  time: string | null;
  t?: number;
  line: string;
}

/**
 * fetchOK sends a GET and returns the answer when it is 2xx; otherwise an
 * ApiError with the server's sentence, or with status 0 when the server
 * could not be reached. An abort through signal rejects with its
 * AbortError, for the caller to ignore.
 */
async function fetchOK(path: string, signal?: AbortSignal): Promise<Response> {
  let r: Response;
  try {
    r = await fetch(path, { headers: authHeaders(), credentials: 'omit', cache: 'no-store', signal });
  } catch (e) {
    if (signal?.aborted) throw e;
    throw new ApiError(0, 'the termkeep server is not reachable');
  }
  if (r.ok) return r;
  const text = await r.text().catch(() => '');
  let msg = text || r.statusText;
  let code: string | undefined;
  try {
    const e = JSON.parse(text) as { error?: string; code?: string };
    msg = e.error ?? msg;
    if (typeof e.code === 'string') code = e.code;
  } catch {
    // not JSON: keep the text
  }
  throw new ApiError(r.status, msg, code);
}

/** ndjson reads an answer of JSON lines. */
async function ndjson<V>(r: Response): Promise<V[]> {
  const out: V[] = [];
  for (const line of (await r.text()).split('\n')) if (line.trim()) out.push(JSON.parse(line) as V);
  return out;
}

function base64Bytes(b64: string): Uint8Array {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function sessionPath(id: string, rest: string): string {
  return `/api/sessions/${encodeURIComponent(id)}${rest}`;
}

/** The replay endpoints (docs/protocol.md, "Replay"). Positions are offsets, times Unix ms. */
export const replay = {
  timeline: (id: string, signal?: AbortSignal) =>
    fetchOK(sessionPath(id, '/replay'), signal).then((r) => r.json() as Promise<ReplayTimeline>),

  /**
   * screen is the screen at a moment: at an offset, at a time (Unix ms), or
   * at the end when neither is given; with scrollback lines of history above it.
   */
  screen: async (id: string, at: { offset?: number; t?: number }, scrollback: number, signal?: AbortSignal): Promise<ReplayScreen> => {
    const q = new URLSearchParams({ scrollback: String(scrollback), format: 'snapshot' });
    if (at.offset !== undefined) q.set('at', String(at.offset));
    else if (at.t !== undefined) q.set('at', `t${Math.round(at.t)}`);
    const r = await fetchOK(sessionPath(id, `/replay/screen?${q}`), signal);
    const data = new Uint8Array(await r.arrayBuffer());
    const size = /^(\d+)x(\d+)$/.exec(r.headers.get('Termkeep-Size') ?? '');
    return {
      data,
      offset: Number(r.headers.get('Termkeep-Offset')),
      t: Number(r.headers.get('Termkeep-Time')),
      cols: size ? Number(size[1]) : 80,
      rows: size ? Number(size[2]) : 24,
    };
  },

  /** output is the log from offset `from`, at most about max bytes of it. */
  output: async (id: string, from: number, max: number, signal?: AbortSignal): Promise<ReplayOutput> => {
    const r = await fetchOK(sessionPath(id, `/replay/output?from=${from}&max=${max}`), signal);
    type Line = Omit<ReplayItem, 'data'> & { data?: string; next?: number; done?: boolean };
    const out: ReplayOutput = { items: [], next: from, done: false };
    for (const l of await ndjson<Line>(r)) {
      if (l.next !== undefined) {
        out.next = l.next;
        out.done = !!l.done;
      } else {
        out.items.push({ ...l, data: l.data === undefined ? undefined : base64Bytes(l.data) });
      }
    }
    return out;
  },

  /** grep finds lines of the whole log holding text (a plain string, any case), the first limit of them. */
  grep: async (id: string, text: string, limit: number, signal?: AbortSignal): Promise<GrepHit[]> => {
    const q = new URLSearchParams({ pattern: text, literal: '1', i: '1', limit: String(limit) });
    return ndjson<GrepHit>(await fetchOK(sessionPath(id, `/grep?${q}`), signal));
  },
};

export const api = {
  me: () => call<Me>('GET', '/api/me'),
  list: () => call<Session[]>('GET', '/api/sessions'),
  get: (id: string) => call<Session>('GET', `/api/sessions/${encodeURIComponent(id)}`),
  create: (req: { name?: string; cwd?: string; cols?: number; rows?: number }) =>
    call<Session>('POST', '/api/sessions', req),
  rename: (id: string, name: string) => call<Session>('PATCH', `/api/sessions/${encodeURIComponent(id)}`, { name }),
  /** restore starts a new process in an ended session, where it was. */
  restore: (id: string) =>
    call<{ session: Session; notices?: string[] }>('POST', `/api/sessions/${encodeURIComponent(id)}/restore`),
  /** kill ends the session (SIGHUP, then SIGKILL); it stays listed as closed. */
  kill: (id: string) => call<Session>('POST', `/api/sessions/${encodeURIComponent(id)}/kill`),
  /** remove removes an ended session with its output log (409 for a running one). */
  remove: (id: string) => call<void>('DELETE', `/api/sessions/${encodeURIComponent(id)}`),
};

/** BrowserSession is a browser signed in with a credential of its own (never the credential). */
export interface BrowserSession {
  id: string;
  user: string;
  /** 'owner', or the id of the token it was made from. */
  from: string;
  token_name?: string;
  label: string;
  state: 'active' | 'expired' | 'revoked' | string;
  created_at: string;
  last_used_at: string;
  expires_at: string;
  /** This page's own. */
  current?: boolean;
}

/** browsers lists and revokes the browsers signed in: all of them for the owner, those of its own token for anyone else. */
export const browsers = {
  list: () => call<BrowserSession[]>('GET', '/api/browser-sessions'),
  revoke: (id: string) => call<BrowserSession>('DELETE', `/api/browser-sessions/${encodeURIComponent(id)}`),
};

/** ShareLink is a share link of one session (an access token), as made: its address is shown this once. */
export interface ShareLink {
  id: string;
  name?: string;
  read_only: boolean;
  state: string;
  expires_at: string | null;
  created_at: string;
  last_used_at: string | null;
  /** Only in the answer that made it. */
  secret?: string;
  url?: string;
  warning?: string;
}

/** share makes, lists and revokes a session's share links (the owner only), and lists who watches it (anyone who sees it). */
export const share = {
  links: (id: string) => call<ShareLink[]>('GET', `/api/sessions/${encodeURIComponent(id)}/links`),
  create: (id: string, req: { name?: string; writable?: boolean; expires_in?: number }) =>
    call<ShareLink>('POST', `/api/sessions/${encodeURIComponent(id)}/links`, req),
  revoke: (id: string, link: string) =>
    call<ShareLink>('DELETE', `/api/sessions/${encodeURIComponent(id)}/links/${encodeURIComponent(link)}`),
  viewers: (id: string) => call<import('./presence').Presence>('GET', `/api/sessions/${encodeURIComponent(id)}/viewers`),
};
