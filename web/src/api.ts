// The REST API of the TCP listener (docs/protocol.md, "REST API"). The
// browser carries the owner token in its cookie; state-changing calls add
// the X-Termkeep header the server requires of them (CSRF).

export interface Session {
  id: string;
  name: string;
  state: 'running' | 'exited' | 'closed' | 'interrupted' | string;
  pid: number | null;
  exit_code: number | null;
  reason?: string;
  command: string[];
  cwd: string;
  cols: number;
  rows: number;
  created_at: string;
  ended_at: string | null;
  first_offset: number;
  end_offset: number;
  viewers?: number;
  /** When a running session went quiet (likely waiting for input), RFC 3339; null while output flows. */
  quiet_since?: string | null;
}

export interface Event {
  id: number;
  at: string;
  kind: string;
  session: string;
  detail: Record<string, unknown>;
}

/** ApiError is a non-2xx answer; message is the server's sentence. */
export class ApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

async function call<V>(method: string, path: string, body?: unknown): Promise<V> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (method !== 'GET') headers['X-Termkeep'] = '1';
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const r = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
    cache: 'no-store',
  });
  if (r.status === 204) return undefined as V;
  const text = await r.text();
  let data: unknown = undefined;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text for the message
  }
  if (!r.ok) {
    const msg = (data as { error?: string } | undefined)?.error ?? (text || r.statusText);
    throw new ApiError(r.status, msg);
  }
  return data as V;
}

export const api = {
  list: () => call<Session[]>('GET', '/api/sessions'),
  get: (id: string) => call<Session>('GET', `/api/sessions/${encodeURIComponent(id)}`),
  create: (req: { name?: string; cwd?: string; cols?: number; rows?: number }) =>
    call<Session>('POST', '/api/sessions', req),
  rename: (id: string, name: string) => call<Session>('PATCH', `/api/sessions/${encodeURIComponent(id)}`, { name }),
  /** restore starts a new process in an ended session, where it was. */
  restore: (id: string) =>
    call<{ session: Session; notices?: string[] }>('POST', `/api/sessions/${encodeURIComponent(id)}/restore`),
  /** close ends the session and removes it with its output log. */
  close: (id: string) => call<void>('DELETE', `/api/sessions/${encodeURIComponent(id)}?remove=1`),
};

/** displayName is what a tab calls a session. */
export function commandName(s: Session): string {
  const c = s.command?.[0] ?? 'shell';
  return c.slice(c.lastIndexOf('/') + 1) || 'shell';
}
