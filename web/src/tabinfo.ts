// What a tab says about its session: its name, its state as a word, why it
// ended, whether it went quiet. Pure functions of the session's fields (no
// DOM), so that they are tested under node (test/unit).

import type { Session } from './api';
import type { TermSession } from './session';

/** TabSubject is the part of a TermSession a tab reads. */
export type TabSubject = Pick<TermSession, 'id' | 'info' | 'exit' | 'state' | 'written' | 'title'>;

export interface Badge {
  cls: string;
  text: string;
  title: string;
}

/** commandName is the program a session runs, without its directory; "unknown" when it was lost with its meta.json. */
export function commandName(s: Pick<Session, 'command' | 'unknown'>): string {
  if (s.unknown?.includes('command')) return 'unknown';
  const c = s.command?.[0] ?? 'shell';
  return c.slice(c.lastIndexOf('/') + 1) || 'shell';
}

/** label is what a tab calls a session: its name, else its title, else its command and id. */
export function label(ts: Pick<TabSubject, 'id' | 'info' | 'title'>): string {
  return ts.info.name || ts.title || `${commandName(ts.info)} ${ts.id.slice(0, 4)}`;
}

/** shortPath shows the end of a directory: "…/src/app". */
export function shortPath(p: string): string {
  if (!p) return '';
  const parts = p.split('/').filter(Boolean);
  if (parts.length <= 2) return p;
  return '…/' + parts.slice(-2).join('/');
}

/** The causes of an interrupted end the server records (Session.cause), in words. */
const CAUSES = new Map([
  ['machine_restarted', 'the machine restarted'],
  ['holder_killed', 'its holder was killed'],
  ['stopped', 'its holder was stopped (the machine or the service stopping)'],
]);

/** plainReason is a reason the server gave, without the byte offsets it counts in. */
export function plainReason(reason: string): string {
  return reason
    .replace(/[;,]?\s*(?:its )?output up to (?:byte|offset) \d+ (?:is|was) kept/gi, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * interruptedWhy says why an interrupted session ended: the cause the server
 * recorded ("the machine restarted", "its holder was killed"), else its reason.
 */
export function interruptedWhy(ts: TabSubject): string {
  if (ts.info.state === 'interrupted') {
    const c = CAUSES.get(ts.info.cause ?? '') ?? ts.info.cause_text;
    if (c) return c;
  }
  return plainReason(ts.exit?.reason || ts.info.reason || '');
}

/** badge is a tab's state as a word and a class. */
export function badge(ts: TabSubject): Badge {
  // A paused session's process was closed by the pause: the registry's word wins.
  const state = ts.info.state === 'paused' ? 'paused' : (ts.exit?.state ?? (ts.info.state === 'running' ? null : ts.info.state));
  if (state) {
    const code = ts.exit ? ts.exit.exit_code : ts.info.exit_code;
    if (state === 'paused') return { cls: 'closed', text: 'paused', title: ts.info.reason || 'its workspace is paused' };
    if (state === 'interrupted') return { cls: 'interrupted', text: 'interrupted', title: interruptedWhy(ts) || 'the session was interrupted (its holder or the machine stopped)' };
    if (state === 'closed') return { cls: 'closed', text: 'closed', title: 'the session was closed' };
    const word = code === null || code === undefined ? 'exited' : `exited ${code}`;
    return { cls: code === 0 ? 'exited-ok' : 'exited-bad', text: word, title: code === null ? 'the process exited' : `the process exited with status ${code}` };
  }
  const map: Record<TabSubject['state'], Badge> = {
    live: { cls: 'live', text: 'live', title: 'connected: output is live' },
    connecting: { cls: 'connecting', text: 'connecting', title: 'connecting to the session' },
    reconnecting: { cls: 'reconnecting', text: 'reconnecting', title: 'the connection dropped; reconnecting' },
    ended: { cls: 'closed', text: 'ended', title: 'the session ended' },
    gone: { cls: 'closed', text: 'removed', title: 'the session was removed' },
  };
  return map[ts.state];
}

/** sentence capitalizes a message and ends it with a period. */
export function sentence(s: string): string {
  const t = s.trim();
  return t.charAt(0).toUpperCase() + t.slice(1) + (/[.!?]$/.test(t) ? '' : '.');
}
