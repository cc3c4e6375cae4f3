// What the page does to sessions through the API: create one, end and
// remove one (after asking), restore one; and showing only what this
// page's access allows. Each says what went wrong in a toast; the page
// (app.ts) updates its tabs from what each returns.

import { api, ApiError, Session } from './api';
import { confirm, toast } from './dialogs';
import { $ } from './dom';
import type { TermSession } from './session';
import { commandName, label } from './tabinfo';

/**
 * createSession makes a session at size, in directory cwd when it is
 * given and still exists (else where the server starts it). It returns
 * null when the server refused.
 */
export async function createSession(size: { cols: number; rows: number }, cwd: string | undefined): Promise<Session | null> {
  try {
    return await api.create({ ...size, cwd: cwd || undefined });
  } catch (e) {
    if (cwd && e instanceof ApiError && e.status === 400) {
      try {
        return await api.create({ ...size });
      } catch (e2) {
        toast(`Could not create a session: ${(e2 as Error).message}`);
        return null;
      }
    }
    toast(`Could not create a session: ${(e as Error).message}`);
    return null;
  }
}

/**
 * endSession ends (after asking, when it runs) and removes session ts. It
 * returns whether the session is gone.
 */
export async function endSession(ts: TermSession): Promise<boolean> {
  const id = ts.id;
  const running = !ts.exit && ts.info.state === 'running';
  if (running) {
    const name = label(ts);
    const what = ts.info.pid ? `${commandName(ts.info)} (pid ${ts.info.pid})` : commandName(ts.info);
    const ok = await confirm(
      `End “${name}”?`,
      `This stops ${what} and everything running in it, and removes its output. Closing the browser tab instead would keep it running.`,
      'End session',
    );
    if (!ok) {
      ts.focus();
      return false;
    }
  }
  try {
    // Ending and removing are two calls, as for `termkeep kill` and
    // `termkeep rm`: a session this page saw ended is not ended again,
    // so one restored elsewhere meanwhile is refused (409), not killed.
    if (running) await api.kill(id);
    await api.remove(id);
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 404)) {
      toast(`Could not close the session: ${(e as Error).message}`);
      return false;
    }
  }
  return true;
}

/**
 * restoreSession starts ended session ts again and follows it. What is
 * typed from the moment it is asked goes to the new process: the session
 * keeps it until it is live (focus: the terminal takes the keyboard before
 * the button is disabled, which would drop the focus on the page's body).
 */
export async function restoreSession(ts: TermSession, focus: boolean): Promise<void> {
  const btn = $('banner-restore') as HTMLButtonElement;
  ts.holdInput();
  if (focus) ts.focus();
  btn.disabled = true;
  try {
    const r = await api.restore(ts.id);
    ts.revive(r.session);
    if (r.notices?.length) toast(r.notices.join('\n'));
  } catch (e) {
    ts.dropHeld();
    toast(`Could not restore: ${(e as Error).message}`);
  } finally {
    btn.disabled = false;
  }
}

/**
 * showAccess shows only what this page's access can do: a share link or a
 * read-only token cannot create sessions, a read-only one cannot end,
 * rename or restore them either; each would only be refused (403).
 */
export function showAccess(canCreate: boolean, canWrite: boolean): void {
  $('new-tab').hidden = !canCreate;
  $('empty-new').hidden = !canCreate;
  const hint = $('empty-new').nextElementSibling; // the shortcut, under the button
  if (hint instanceof HTMLElement && hint.classList.contains('hint')) hint.hidden = !canCreate;
  if (canWrite) delete $('bar').dataset.readOnly;
  else $('bar').dataset.readOnly = '1';
}
