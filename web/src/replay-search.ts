// The replay's search: the whole log (replay/grep), not only the terminal's
// scrollback; each hit is a line with the time it was printed, and a click
// shows that moment.

import type { Terminal } from '@xterm/xterm';
import { GrepHit, replay as api } from './api';
import { $ } from './dom';
import { clockTime, hitTime } from './replay-clock';
import { findMark } from './replay-mark';

const HIT_LIMIT = 500;

/** What the search needs of the view. */
export interface ReplaySearchHost {
  id(): string | null;
  /** show goes to the moment hit h, a match of query, was drawn. */
  show(h: GrepHit, query: string): void;
  /** hits: the hits changed (the timeline marks them). */
  hits(hits: GrepHit[]): void;
  /** failed says why a request failed. */
  failed(e: unknown): string;
  /** left: Esc left the search box. */
  left(): void;
}

function isAbort(e: unknown): boolean {
  return e instanceof DOMException && e.name === 'AbortError';
}

export class ReplaySearch {
  readonly input = $('replay-search') as HTMLInputElement;
  private readonly hitsEl = $('replay-hits');
  private readonly hitsList = $('replay-hits-list');
  private readonly hitsHead = $('replay-hits-head');
  private gen = 0;
  private abort: AbortController | null = null;
  private hits: GrepHit[] = [];
  /** The text the hits match. */
  private query = '';

  constructor(private readonly host: ReplaySearchHost) {
    this.input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        void this.run();
      }
    });
    this.input.addEventListener('search', () => {
      if (!this.input.value) this.clear();
    });
    this.hitsList.addEventListener('click', (e) => {
      const b = (e.target as HTMLElement).closest<HTMLElement>('.replay-hit');
      const h = b ? this.hits[Number(b.dataset.index)] : undefined;
      if (!b || !h) return;
      for (const x of this.hitsList.querySelectorAll('.replay-hit.current')) x.classList.remove('current');
      b.classList.add('current');
      this.host.show(h, this.query);
    });
    $('replay-hits-close').addEventListener('click', () => this.clear());
  }

  focus(): void {
    this.input.focus();
    this.input.select();
  }

  /** escape empties the search (Esc in its box). */
  escape(): void {
    if (this.input.value || !this.hitsEl.hidden) {
      this.input.value = '';
      this.clear();
    }
    this.host.left();
  }

  /** stop drops an answer on its way (the view closes). */
  stop(): void {
    this.abort?.abort();
  }

  private async run(): Promise<void> {
    const id = this.host.id();
    const q = this.input.value;
    this.abort?.abort();
    const sgen = ++this.gen;
    if (!id || !q.trim()) {
      this.clear();
      return;
    }
    this.hitsEl.hidden = false;
    this.hitsHead.textContent = 'Searching the whole log…';
    this.hitsList.textContent = '';
    const ac = (this.abort = new AbortController());
    let hits: GrepHit[];
    try {
      hits = await api.grep(id, q, HIT_LIMIT, ac.signal);
    } catch (e) {
      if (sgen !== this.gen || isAbort(e)) return;
      this.hitsHead.textContent = this.host.failed(e);
      return;
    }
    if (sgen !== this.gen) return;
    this.hits = hits;
    this.query = q;
    this.hitsHead.textContent =
      hits.length === 0 ? `No line holds “${q}”.` : hits.length >= HIT_LIMIT ? `The first ${HIT_LIMIT} lines holding “${q}”` : `${hits.length} line${hits.length === 1 ? '' : 's'} holding “${q}”`;
    const lower = q.toLowerCase();
    hits.forEach((h, i) => {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'replay-hit';
      b.dataset.index = String(i);
      b.dataset.offset = String(h.offset);
      const t = hitTime(h);
      if (t !== null) b.dataset.t = String(t);
      const when = document.createElement('time');
      when.textContent = t === null ? `byte ${h.offset}` : clockTime(t);
      const line = document.createElement('span');
      line.className = 'line';
      // The match marked (found without regard to case, as the server did).
      const at = h.line.toLowerCase().indexOf(lower);
      if (at >= 0) {
        const mark = document.createElement('mark');
        mark.textContent = h.line.slice(at, at + q.length);
        line.append(h.line.slice(0, at), mark, h.line.slice(at + q.length));
      } else {
        line.textContent = h.line;
      }
      b.append(when, line);
      this.hitsList.appendChild(b);
    });
    this.host.hits(hits);
  }

  clear(): void {
    this.abort?.abort();
    this.gen++;
    this.hits = [];
    this.hitsEl.hidden = true;
    this.hitsList.textContent = '';
    this.host.hits([]);
  }
}

/**
 * markMatch selects query's match on term's screen (findMark: the one the
 * cursor has just drawn, else the nearest above), scrolled into view, and
 * returns the text selected; null when it is not there.
 */
export function markMatch(term: Terminal, query: string): string | null {
  const b = term.buffer.active;
  // Each line's text, and for each of its characters the column it is in
  // and its width (a wide character takes two columns).
  const lines: string[] = [];
  const cols: { x: number; w: number }[][] = [];
  for (let y = 0; y < b.length; y++) {
    const line = b.getLine(y);
    let text = '';
    const at: { x: number; w: number }[] = [];
    for (let x = 0; line && x < line.length; x++) {
      const c = line.getCell(x);
      if (!c || c.getWidth() === 0) continue;
      const ch = c.getChars() || ' ';
      for (let i = 0; i < ch.length; i++) at.push({ x, w: c.getWidth() });
      text += ch;
    }
    lines.push(text);
    cols.push(at);
  }
  const cy = b.baseY + b.cursorY;
  const cur = cols[cy] ?? [];
  const ci = cur.findIndex((c) => c.x >= b.cursorX);
  const m = findMark(lines, { line: cy, col: ci < 0 ? cur.length : ci }, query);
  if (!m) {
    term.clearSelection();
    return null;
  }
  const first = cols[m.line][m.start];
  const last = cols[m.line][m.end - 1];
  term.select(first.x, m.line, last.x + last.w - first.x);
  if (m.line < b.viewportY || m.line >= b.viewportY + term.rows) term.scrollToLine(Math.max(0, m.line - (term.rows >> 1)));
  return term.getSelection();
}
