// The stage around the active terminal: the banner of an ended, stuck or
// unlogged session (with Restore and Close), the reconnecting overlay, the
// size's holder and "fit to this window", and the empty page.

import { $ } from './dom';
import { dropNotice } from './dropcause';
import { offersFit } from './sizeinfo';
import type { TermSession } from './session';
import { badge, interruptedWhy, sentence } from './tabinfo';

/** renderBanner shows what is wrong with the active session, if anything; canWrite offers Restore and Close. */
export function renderBanner(ts: TermSession | undefined, canWrite: boolean): void {
  const banner = $('banner');
  if (ts && (ts.exit || ts.info.state !== 'running')) {
    const b = badge(ts);
    const code = ts.exit ? ts.exit.exit_code : ts.info.exit_code;
    let text: string;
    if (b.cls === 'interrupted') {
      const why = interruptedWhy(ts);
      text = `Interrupted${why ? `: ${why}` : ''}.`;
    } else if (b.text === 'paused') text = `Paused${ts.info.reason ? `: ${ts.info.reason}` : ''}.`;
    else if (b.cls === 'closed') text = 'This session was closed.';
    else text = code === null || code === undefined ? 'The process exited.' : `The process exited with status ${code}.`;
    $('banner-text').textContent = text;
    banner.dataset.kind = b.cls;
    $('banner-restore').hidden = $('banner-close').hidden = !canWrite;
    banner.hidden = false;
  } else if (ts?.holderStuck) {
    $('banner-text').textContent = 'This session does not answer: its holder process is stopped or stuck. What you type waits, and may fail, until it answers; killing the session ends it by force.';
    banner.dataset.kind = 'unresponsive';
    $('banner-restore').hidden = $('banner-close').hidden = true;
    banner.hidden = false;
  } else if (ts?.logStopped) {
    $('banner-text').textContent = `Output is not being saved: the log stopped (${ts.logStopped}). The session runs on; saving resumes by itself when the log can write again.`;
    banner.dataset.kind = 'log-stopped';
    $('banner-restore').hidden = $('banner-close').hidden = true;
    banner.hidden = false;
  } else {
    banner.hidden = true;
  }
}

/** renderOverlay covers a connecting or reconnecting terminal with what is happening and when it tries again. */
export function renderOverlay(ts: TermSession | undefined): void {
  const overlay = $('overlay');
  const show = !!ts && (ts.state === 'reconnecting' || ts.state === 'connecting');
  if (!show) {
    if (!overlay.hidden) overlay.hidden = true;
    return;
  }
  const title = ts!.state === 'reconnecting' ? 'Reconnecting…' : 'Connecting…';
  (overlay.querySelector('.overlay-title') as HTMLElement).textContent = title;
  overlay.dataset.state = ts!.state;
  const secs = Math.max(0, Math.ceil((ts!.retryAt - Date.now()) / 1000));
  const parts: string[] = [];
  const why = dropNotice(navigator.onLine, ts!.dropCause, ts!.lastError);
  if (why) parts.push(sentence(why));
  parts.push(secs > 0 ? `Trying again in ${secs} s.` : 'Trying now.');
  parts.push('The session keeps running.');
  $('overlay-detail').textContent = parts.join(' ');
  overlay.hidden = false;
}

/**
 * renderSize shows who holds the active session's size, and "fit to this
 * window" where this page may take it: in the bar on a desktop, in the
 * session list on a phone (whose bar has no room for them).
 */
export function renderSize(ts: TermSession | undefined, canWrite: boolean): void {
  const el = $('size-holder');
  const h = ts && !ts.exit ? ts.sizeHolder() : null;
  el.hidden = !h;
  const listed = $('tab-list-size');
  listed.hidden = !h;
  if (h) {
    // Two parts, so that a crowded bar drops who before the size (app.css).
    const cut = h.short.indexOf(' · ');
    setText(el.querySelector('.size-grid') as HTMLElement, cut < 0 ? '' : h.short.slice(0, cut));
    setText(el.querySelector('.size-who') as HTMLElement, cut < 0 ? h.short : h.short.slice(cut));
    el.title = h.long;
    el.dataset.mine = h.mine ? '1' : '';
    setText(listed, h.short);
    listed.title = h.long;
  }
  const fit = $('btn-fit');
  fit.hidden = !canWrite || !ts || !offersFit(h, ts.size.readOnly, ts.size.want, ts.term.cols, ts.term.rows);
  // The list has room for it whenever the page may take the size.
  $('tab-list-fit').hidden = !h || !canWrite || ts!.size.readOnly;
  // Where the bar has no room for the indicator, the button's tooltip says it.
  fit.title = `Fit the session to this window (Alt+Shift+F)${h ? `\n${h.long}` : ''}`;
}

/** setText changes an element's text only when it differs (no needless layout). */
function setText(el: HTMLElement, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}
