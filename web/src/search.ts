// The scrollback search bar (Ctrl+Shift+F): finds text in the active
// terminal's scrollback with xterm.js's search addon, and counts matches.

import { $ } from './dom';
import type { TermSession } from './session';
import type { ThemeName } from './theme';

/** What the search bar needs of the page. */
export interface SearchHost {
  active(): TermSession | undefined;
  theme(): ThemeName;
}

export class ScrollbackSearch {
  private readonly bar = $('searchbar');
  private readonly input = $('search-input') as HTMLInputElement;
  private readonly countEl = $('search-count');

  constructor(private readonly host: SearchHost) {
    this.input.addEventListener('input', () => this.run(true));
    this.input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        this.run(false, e.shiftKey);
      } else if (e.key === 'Escape') {
        e.preventDefault();
        this.close();
      }
    });
    $('search-next').addEventListener('click', () => this.run(false));
    $('search-prev').addEventListener('click', () => this.run(false, true));
    $('search-close').addEventListener('click', () => this.close());
  }

  get isOpen(): boolean {
    return !this.bar.hidden;
  }

  open(): void {
    this.bar.hidden = false;
    this.input.focus();
    this.input.select();
    if (this.input.value) this.run(true);
  }

  close(): void {
    this.bar.hidden = true;
    this.countEl.textContent = '';
    const ts = this.host.active();
    ts?.search.clearDecorations();
    ts?.term.clearSelection();
    ts?.focus();
  }

  run(incremental: boolean, backwards = false): void {
    const ts = this.host.active();
    const q = this.input.value;
    if (!ts) return;
    if (!q) {
      ts.search.clearDecorations();
      this.countEl.textContent = '';
      return;
    }
    const dark = this.host.theme() === 'dark';
    const opts = {
      incremental: incremental && !backwards,
      decorations: {
        matchBackground: dark ? '#4a3f14' : '#fff1a8',
        matchOverviewRuler: '#d9b45a',
        activeMatchBackground: dark ? '#8a6d12' : '#ffd33d',
        activeMatchColorOverviewRuler: '#ff9f1a',
      },
    };
    const found = backwards ? ts.search.findPrevious(q, opts) : ts.search.findNext(q, opts);
    if (!found) this.countEl.textContent = 'No results';
  }

  /** count shows the active terminal's match count (its search addon reports it). */
  count(index: number, count: number): void {
    const el = this.countEl;
    if (count === 0) el.textContent = 'No results';
    else if (index < 0) el.textContent = `${count}+ results`;
    else el.textContent = `${index + 1} of ${count}`;
  }
}
