// The page's messages to the user: the confirmation dialog, the toast, the
// full-page notice, and copying to the clipboard (which says so in a toast).

import { $ } from './dom';

/** confirm asks a question; safe puts the focus on cancel, for a question
 *  a page of another site can make the browser ask (Enter must not say yes). */
export function confirm(title: string, text: string, ok: string, cancel = 'Cancel', safe = false): Promise<boolean> {
  const d = $('dialog') as HTMLDialogElement;
  $('dialog-title').textContent = title;
  $('dialog-text').textContent = text;
  $('dialog-ok').textContent = ok;
  $('dialog-cancel').textContent = cancel;
  d.returnValue = '';
  d.showModal();
  ($(safe ? 'dialog-cancel' : 'dialog-ok') as HTMLButtonElement).focus();
  return new Promise((resolve) => {
    d.addEventListener('close', () => resolve(d.returnValue === 'ok'), { once: true });
  });
}

/** dialogOpen says whether a modal dialog of the page is open (it has the keys then): any of them, the Share dialog's included. */
export function dialogOpen(): boolean {
  return document.querySelector('dialog[open]') !== null;
}

/** ClipAnswer is the user's answer to a program's clipboard write. */
export type ClipAnswer = 'once' | 'session' | 'deny';

let clipAsking: { text: string; resolve: (a: ClipAnswer) => void } | null = null;

/**
 * askClipboard asks whether a program of session `who` may set the
 * clipboard to text: Allow once, Always for this session, or Deny (the
 * focus, and Escape). A write that arrives while the question is open
 * takes the place of the one asked about, which is denied.
 */
export function askClipboard(who: string, text: string): Promise<ClipAnswer> {
  const d = $('clip-ask') as HTMLDialogElement;
  const n = [...text].length;
  $('clip-ask-text').textContent = `A program in ${who} wants to put ${n} character${n === 1 ? '' : 's'} on the clipboard, where you would paste them later:`;
  $('clip-ask-preview').textContent = text.length > 400 ? text.slice(0, 400) + '…' : text;
  return new Promise((resolve) => {
    if (clipAsking) {
      clipAsking.resolve('deny');
      clipAsking = { text, resolve };
      return;
    }
    clipAsking = { text, resolve };
    d.returnValue = '';
    d.showModal();
    ($('clip-deny') as HTMLButtonElement).focus();
    d.addEventListener(
      'close',
      () => {
        const v = d.returnValue;
        const asked = clipAsking;
        clipAsking = null;
        asked?.resolve(v === 'once' || v === 'session' ? v : 'deny');
      },
      { once: true },
    );
  });
}

let toastTimer = 0;

/** toast shows a short message at the bottom of the page for a few seconds. */
export function toast(text: string): void {
  const t = $('toast');
  t.textContent = text;
  t.hidden = false;
  t.classList.add('show');
  window.clearTimeout(toastTimer);
  toastTimer = window.setTimeout(() => {
    t.classList.remove('show');
    toastTimer = window.setTimeout(() => (t.hidden = true), 250);
  }, 2600);
}

/** fatal covers the page with a notice: signed out, the server not answering. */
export function fatal(title: string, text: string): void {
  $('fatal-title').textContent = title;
  $('fatal-text').textContent = text;
  $('fatal').hidden = false;
}

/** copy puts text on the clipboard; a copy the terminal asked for (OSC 52) says so. */
export function copy(text: string, why: 'osc52' | 'select'): void {
  const done = () => {
    if (why === 'osc52') toast(`Copied ${text.length} character${text.length === 1 ? '' : 's'} to the clipboard`);
  };
  if (navigator.clipboard?.writeText) {
    navigator.clipboard.writeText(text).then(done, () => {
      if (fallbackCopy(text)) done();
    });
  } else if (fallbackCopy(text)) {
    done();
  }
}

function fallbackCopy(text: string): boolean {
  const active = document.activeElement as HTMLElement | null;
  const ta = document.createElement('textarea');
  ta.value = text;
  ta.setAttribute('readonly', '');
  ta.style.position = 'fixed';
  ta.style.opacity = '0';
  document.body.appendChild(ta);
  ta.select();
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  ta.remove();
  active?.focus();
  return ok;
}
