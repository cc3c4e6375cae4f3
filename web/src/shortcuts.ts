// The page's keyboard shortcuts (README's table): taken on the window
// before the terminal sees the key, so that they work wherever the focus is.

import { copy, dialogOpen, toast } from './dialogs';
import { isTabModeKey } from './keys';
import { FONT_DEFAULT } from './prefs';
import type { TermSession } from './session';
import { numbered } from './taborder';

/** What the shortcuts need of the page. */
export interface ShortcutHost {
  readonly activeId: string | null;
  readonly canCreate: boolean;
  /** Whether this page may change sessions (end, rename): not a read-only link. */
  readonly canWrite: boolean;
  readonly fontSize: number;
  readonly replay: { readonly isOpen: boolean; key(e: KeyboardEvent): boolean; focusSearch(): void };
  active(): TermSession | undefined;
  order(): readonly string[];
  activate(id: string): void;
  toggleReplay(): void;
  openSearch(): void;
  newSession(): Promise<void>;
  closeSession(id: string): Promise<void>;
  startRename(id: string): void;
  cycle(delta: number): void;
  moveActive(delta: number): void;
  setFont(size: number): void;
  /** fitToWindow gives the active session this window's size. */
  fitToWindow(): void;
  /** toggleTabMoves turns on and off Tab moving the focus out of the terminal. */
  toggleTabMoves(): void;
}

export function bindShortcuts(host: ShortcutHost): void {
  window.addEventListener(
    'keydown',
    (e) => {
      if (handleShortcut(host, e)) {
        e.preventDefault();
        e.stopPropagation();
      }
    },
    true,
  );
}

/** handleShortcut does what key e is a shortcut for, and says whether it was one. */
function handleShortcut(host: ShortcutHost, e: KeyboardEvent): boolean {
  if (e.isComposing) return false;
  const target = e.target as HTMLElement | null;
  const inField = !!target && target.tagName === 'INPUT';
  const ctrl = e.ctrlKey || e.metaKey;
  const dialog = dialogOpen();
  const replay = host.replay;
  if (ctrl && e.shiftKey && !e.altKey && e.code === 'KeyH' && !dialog) {
    host.toggleReplay();
    return true;
  }
  if (replay.isOpen && !dialog && replay.key(e)) return true;
  if (isTabModeKey(e) && !dialog) {
    host.toggleTabMoves();
    return true;
  }
  if (ctrl && e.shiftKey && !e.altKey && e.code === 'KeyF') {
    if (replay.isOpen) replay.focusSearch();
    else host.openSearch();
    return true;
  }
  if (inField || dialog) return false;
  if (ctrl && e.shiftKey && e.code === 'KeyV' && navigator.clipboard?.readText) {
    // With Alt, a raw paste: escape sequences and control characters too.
    const ts = host.active();
    const raw = e.altKey;
    navigator.clipboard.readText().then(
      (t) => {
        if (t) ts?.paste(t, raw);
      },
      () => toast('The browser did not allow reading the clipboard: paste with its menu or Ctrl+V there.'),
    );
    return true;
  }
  if (ctrl && e.shiftKey && !e.altKey && e.code === 'KeyC') {
    const sel = host.active()?.term.getSelection();
    if (sel) copy(sel, 'select');
    return true;
  }
  if (ctrl && !e.shiftKey && !e.altKey && (e.key === '=' || e.key === '+')) {
    host.setFont(host.fontSize + 1);
    return true;
  }
  if (ctrl && !e.altKey && (e.key === '-' || e.key === '_')) {
    host.setFont(host.fontSize - 1);
    return true;
  }
  if (ctrl && !e.shiftKey && !e.altKey && e.key === '0') {
    host.setFont(FONT_DEFAULT);
    return true;
  }
  if (e.altKey && !ctrl && !e.shiftKey && /^Digit[1-9]$/.test(e.code)) {
    const id = numbered(host.order(), Number(e.code.slice(5)));
    if (id) host.activate(id);
    return true;
  }
  if (e.altKey && e.shiftKey && !ctrl) {
    const id = host.activeId;
    switch (e.code) {
      case 'KeyT':
        if (!host.canCreate) return false; // the terminal gets the key
        void host.newSession();
        return true;
      case 'KeyW':
        if (!host.canWrite) return false; // nothing to offer: the terminal gets the key
        if (id) void host.closeSession(id);
        return true;
      case 'KeyR':
        if (!host.canWrite) return false;
        if (id) host.startRename(id);
        return true;
      case 'KeyF':
        // Taken even where it does nothing (a read-only page): the key
        // would otherwise reach the terminal as typing and be refused.
        host.fitToWindow();
        return true;
      case 'ArrowLeft':
        host.cycle(-1);
        return true;
      case 'ArrowRight':
        host.cycle(1);
        return true;
      case 'PageUp':
        host.moveActive(-1);
        return true;
      case 'PageDown':
        host.moveActive(1);
        return true;
    }
  }
  // While the replay covers it, the live terminal gets no keys (it may
  // still hold the focus, and typing into a shell unseen is a surprise).
  return replay.isOpen && !!target?.closest('.term-host');
}
