// What the Share dialog says of each viewer and each link. Pure functions
// (tested under node): no DOM, no server.

/** Viewer is one viewer of a session (GET /api/sessions/{ref}/viewers). */
export interface Viewer {
  id: number;
  kind: 'owner' | 'link' | 'user' | 'cli' | string;
  name?: string;
  read_only: boolean;
  cols?: number;
  rows?: number;
  holds_size: boolean;
}

/** Presence is who watches a session, and whose size it has. */
export interface Presence {
  cols: number;
  rows: number;
  size_owner: number;
  viewers: Viewer[];
}

/** LinkInfo is the part of a share link (an access token) the dialog shows. */
export interface LinkInfo {
  id: string;
  name?: string;
  read_only: boolean;
  expires_at: string | null;
  last_used_at: string | null;
}

export interface Line {
  who: string;
  detail: string;
}

/** viewerLine says who a viewer is and how it watches; you is this page's viewer id (0: unknown). */
export function viewerLine(v: Viewer, you: number): Line {
  const name = (v.name ?? '').trim();
  let who: string;
  switch (v.kind) {
    case 'owner':
      who = name && name !== 'owner' ? `Owner (${name})` : 'Owner';
      break;
    case 'link':
      who = name ? `Link “${name}”` : 'A share link';
      break;
    case 'user':
      who = name ? `User ${name}` : 'Another user';
      break;
    case 'cli':
      who = 'Terminal (termkeep attach)';
      break;
    default:
      who = 'A viewer';
  }
  if (you > 0 && v.id === you) who += ' — this page';
  const parts = [v.read_only ? 'watching' : 'can type'];
  if (v.cols && v.rows) parts.push(`${v.cols}×${v.rows}`);
  if (v.holds_size) parts.push('sets the size');
  return { who, detail: parts.join(' · ') };
}

/** sizeLine says whose size the session has. */
export function sizeLine(p: Presence, you: number): string {
  const size = p.cols && p.rows ? `${p.cols}×${p.rows}` : 'its own size';
  const holder = p.viewers.find((v) => v.id !== 0 && v.id === p.size_owner);
  if (!holder) return `The session is ${size}; no viewer sets its size.`;
  const who = holder.id === you ? 'this page' : viewerLine(holder, 0).who;
  return `The session is ${size}, the size of ${who}.`;
}

/** linkLine says what a link allows and until when, at now (Unix ms). */
export function linkLine(t: LinkInfo, now: number): Line {
  const who = t.name?.trim() ? `“${t.name.trim()}”` : t.id;
  const parts = [t.read_only ? 'read-only' : 'writable: full shell access'];
  parts.push(t.expires_at ? `expires ${untilText(Date.parse(t.expires_at) - now)}` : 'never expires');
  parts.push(t.last_used_at ? 'used' : 'not used yet');
  return { who, detail: parts.join(' · ') };
}

/** untilText says how long until a moment ms away, roughly. */
export function untilText(ms: number): string {
  if (!Number.isFinite(ms)) return 'at an unknown time';
  if (ms <= 0) return 'now';
  const m = Math.ceil(ms / 60000);
  if (m < 60) return `in ${m} min`;
  const h = Math.round(m / 60);
  if (h < 48) return `in ${h} h`;
  return `in ${Math.round(h / 24)} days`;
}
