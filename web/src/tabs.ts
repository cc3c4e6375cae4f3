// The tab bar: a tab per session (its name, state, directory, viewers,
// quiet badge), reordering by drag, renaming in place, and the tab's own
// keys. The page (app.ts) owns the sessions and their order; the bar draws
// them and tells the page what the user did.

import { api } from './api';
import { toast } from './dialogs';
import { $, el, icon } from './dom';
import type { QuietNote } from './quiet';
import type { TermSession } from './session';
import { badge, label, shortPath } from './tabinfo';

/** What the tab bar needs of the page. */
export interface TabHost {
  readonly sessions: ReadonlyMap<string, TermSession>;
  readonly activeId: string | null;
  /** Whether this page may end and rename sessions (not a read-only link). */
  readonly canWrite: boolean;
  order(): readonly string[];
  setOrder(order: string[]): void;
  activate(id: string): void;
  closeSession(id: string): Promise<void>;
  /** cycle goes delta tabs along; focusTerminal: the terminal takes the keyboard (else it stays where it is). */
  cycle(delta: number, focusTerminal?: boolean): void;
  /** quiet is the tab's quiet badge, if it has news (quiet.ts). */
  quiet(ts: TermSession): QuietNote | null;
}

export class TabBar {
  readonly el = $('tabs');
  private readonly tabEls = new Map<string, HTMLElement>();
  /** The session whose name is being edited, if any. */
  renaming: string | null = null;
  private suppressClickUntil = 0;

  constructor(private readonly host: TabHost) {}

  tab(id: string): HTMLElement | undefined {
    return this.tabEls.get(id);
  }

  /** layout puts the tabs in the page's order. */
  layout(): void {
    // Re-append in order (a no-op move for tabs already in place).
    this.host.order().forEach((id, i) => {
      const t = this.tabEls.get(id);
      if (!t) return;
      if (this.el.children[i] !== t) this.el.insertBefore(t, this.el.children[i] ?? null);
      t.dataset.index = String(i + 1);
    });
  }

  remove(id: string): void {
    this.tabEls.get(id)?.remove();
    this.tabEls.delete(id);
  }

  clear(): void {
    this.tabEls.forEach((t) => t.remove());
    this.tabEls.clear();
  }

  /** select marks id's tab as the active one, and prev's as not. */
  select(prev: string | null, id: string): void {
    if (prev) {
      const pel = this.tabEls.get(prev);
      pel?.classList.remove('active');
      pel?.setAttribute('aria-selected', 'false');
      pel?.setAttribute('tabindex', '-1');
    }
    const tel = this.tabEls.get(id);
    tel?.classList.add('active');
    tel?.setAttribute('aria-selected', 'true');
    tel?.setAttribute('tabindex', '0');
    tel?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  }

  render(ts: TermSession): void {
    let t = this.tabEls.get(ts.id);
    if (!t) {
      t = this.makeTab(ts.id);
      this.tabEls.set(ts.id, t);
      this.el.appendChild(t);
      this.layout();
    }
    if (this.renaming === ts.id) return;
    const b = badge(ts);
    const name = label(ts);
    const cwd = ts.oscCwd || ts.info.cwd || '';
    const active = ts.id === this.host.activeId;
    t.classList.toggle('active', active);
    t.classList.toggle('bell', ts.bell);
    t.dataset.state = b.cls;
    t.setAttribute('aria-selected', String(active));
    t.setAttribute('tabindex', active ? '0' : '-1');
    // Delete ends the session only where the page may end it.
    if (this.host.canWrite) t.setAttribute('aria-keyshortcuts', 'Delete');
    else t.removeAttribute('aria-keyshortcuts');
    const lines = [name];
    if (ts.title && ts.title !== name) lines.push(ts.title);
    if (cwd) lines.push(cwd);
    lines.push(`${b.title}${ts.info.pid ? ` · pid ${ts.info.pid}` : ''}`);
    lines.push(`${ts.viewers} viewer${ts.viewers === 1 ? '' : 's'} attached`);
    const quiet = this.host.quiet(ts);
    if (quiet) lines.push(quiet.title);
    const size = ts.exit ? null : ts.sizeHolder();
    if (size) lines.push(size.long);
    t.title = lines.join('\n');
    t.dataset.quiet = quiet ? '1' : '';
    const qb = t.querySelector('.quiet') as HTMLElement;
    qb.hidden = !quiet;
    qb.title = quiet?.title ?? '';
    qb.textContent = quiet?.text ?? '';

    (t.querySelector('.tab-name') as HTMLElement).textContent = name;
    const sub = t.querySelector('.tab-cwd') as HTMLElement;
    sub.textContent = shortPath(cwd);
    sub.hidden = !cwd;
    const bd = t.querySelector('.badge') as HTMLElement;
    bd.textContent = b.text;
    bd.className = `badge ${b.cls}`;
    const v = t.querySelector('.viewers') as HTMLElement;
    (v.querySelector('.count') as HTMLElement).textContent = String(ts.viewers);
    v.title = `${ts.viewers} viewer${ts.viewers === 1 ? '' : 's'} attached`;
    v.hidden = ts.viewers < 1;
    if (active) document.title = ts.title && ts.title !== name ? `${ts.title} · ${name}` : `${name} · termkeep`;
  }

  private makeTab(id: string): HTMLElement {
    const t = el('div', 'tab');
    t.setAttribute('role', 'tab');
    t.dataset.id = id;
    const dot = el('span', 'dot');
    const main = el('span', 'tab-main');
    const top = el('span', 'tab-top');
    const quiet = el('span', 'quiet', 'quiet');
    quiet.hidden = true;
    top.append(el('span', 'tab-name'), el('span', 'badge'), quiet);
    main.append(top, el('span', 'tab-cwd'));
    const viewers = el('span', 'viewers');
    viewers.append(icon(['M1.5 8s2.4-4.5 6.5-4.5S14.5 8 14.5 8 12.1 12.5 8 12.5 1.5 8 1.5 8z'], [[8, 8, 2]]), el('span', 'count', '0'));
    // A pointer's target only: a control inside a tab is one a screen
    // reader cannot reach (the tab is the control), so the keyboard ends a
    // session with Delete on its tab or Alt+Shift+W (render says so).
    const close = el('span', 'tab-close');
    close.title = 'End this session (Alt+Shift+W, or Delete on the tab)';
    close.setAttribute('aria-hidden', 'true');
    close.append(icon(['M4.5 4.5l7 7M11.5 4.5l-7 7']));
    t.append(dot, main, viewers, close);

    close.addEventListener('click', (e) => {
      e.stopPropagation();
      void this.host.closeSession(id);
    });
    close.addEventListener('pointerdown', (e) => e.stopPropagation());
    t.addEventListener('click', () => {
      // The click that ends a drag is not a click on a tab.
      if (performance.now() < this.suppressClickUntil) return;
      this.host.activate(id);
    });
    t.addEventListener('auxclick', (e) => {
      if (e.button === 1) {
        e.preventDefault();
        void this.host.closeSession(id);
      }
    });
    t.addEventListener('dblclick', (e) => {
      if ((e.target as HTMLElement).closest('.tab-close')) return;
      this.startRename(id);
    });
    t.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        this.host.activate(id);
      } else if (e.key === 'F2') {
        e.preventDefault();
        this.startRename(id);
      } else if (e.key === 'Delete' && !e.ctrlKey && !e.altKey && !e.shiftKey && !e.metaKey) {
        e.preventDefault();
        void this.host.closeSession(id);
      } else if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
        e.preventDefault();
        // Arrowing along the tabs keeps the keyboard on them.
        this.host.cycle(e.key === 'ArrowRight' ? 1 : -1, false);
        if (this.host.activeId) this.tabEls.get(this.host.activeId)?.focus();
      }
    });
    this.bindDrag(t, id);
    return t;
  }

  /**
   * bindDrag reorders tabs with the pointer: a mouse drags at once, a
   * finger after holding still for a moment (so a swipe still scrolls the
   * tab bar).
   */
  private bindDrag(t: HTMLElement, id: string): void {
    let startX = 0;
    let dragging = false;
    let pending = false;
    let holdTimer = 0;
    let pointer = -1;
    const begin = () => {
      dragging = true;
      t.classList.add('dragging');
      this.el.classList.add('reordering');
      try {
        t.setPointerCapture(pointer);
      } catch {
        // the pointer is gone
      }
    };
    const finish = (commit: boolean) => {
      window.clearTimeout(holdTimer);
      pending = false;
      if (!dragging) return;
      dragging = false;
      t.classList.remove('dragging');
      this.el.classList.remove('reordering');
      this.suppressClickUntil = performance.now() + 300;
      if (commit) this.host.setOrder([...this.el.querySelectorAll<HTMLElement>('.tab')].map((x) => x.dataset.id!).filter((x) => this.host.sessions.has(x)));
      this.layout();
    };
    t.addEventListener('pointerdown', (e) => {
      if (e.button !== 0 || this.renaming === id) return;
      startX = e.clientX;
      pointer = e.pointerId;
      pending = true;
      if (e.pointerType !== 'mouse') {
        holdTimer = window.setTimeout(() => {
          if (pending) begin();
        }, 400);
      }
    });
    t.addEventListener('pointermove', (e) => {
      if (!pending || e.pointerId !== pointer) return;
      if (!dragging) {
        if (e.pointerType === 'mouse' && Math.abs(e.clientX - startX) > 6) begin();
        else if (e.pointerType !== 'mouse' && Math.abs(e.clientX - startX) > 8) {
          // a swipe: let the bar scroll
          window.clearTimeout(holdTimer);
          pending = false;
        }
        if (!dragging) return;
      }
      e.preventDefault();
      // Move the other tabs, never the dragged one: taking it out of the
      // document would end its pointer capture.
      const kids = [...this.el.children] as HTMLElement[];
      const i = kids.indexOf(t);
      let j = 0;
      for (const o of kids) {
        if (o === t) continue;
        const r = o.getBoundingClientRect();
        if (e.clientX > r.left + r.width / 2) j++;
      }
      if (j > i) for (let k = i + 1; k <= j; k++) this.el.insertBefore(kids[k], t);
      else if (j < i) for (let k = i - 1; k >= j; k--) this.el.insertBefore(kids[k], t.nextSibling);
    });
    t.addEventListener('pointerup', () => finish(true));
    t.addEventListener('pointercancel', () => finish(false));
    t.addEventListener('lostpointercapture', () => finish(true));
  }

  /** startRename edits a tab's name in place: Enter or leaving the field saves it, Esc does not. */
  startRename(id: string): void {
    const ts = this.host.sessions.get(id);
    const t = this.tabEls.get(id);
    if (!ts || !t || this.renaming || !this.host.canWrite) return;
    this.renaming = id;
    const nameEl = t.querySelector('.tab-name') as HTMLElement;
    const input = el('input', 'tab-rename');
    input.value = ts.info.name;
    input.placeholder = label(ts);
    input.maxLength = 64;
    input.spellcheck = false;
    input.setAttribute('aria-label', 'Session name');
    nameEl.replaceWith(input);
    input.focus();
    input.select();
    let done = false;
    const end = async (save: boolean) => {
      if (done) return;
      done = true;
      const name = input.value.trim();
      input.replaceWith(nameEl);
      this.renaming = null;
      if (save && name !== ts.info.name) {
        try {
          ts.info = await api.rename(id, name);
        } catch (e) {
          toast((e as Error).message);
        }
      }
      this.render(ts);
      if (this.host.activeId === id) ts.focus();
    };
    input.addEventListener('keydown', (e) => {
      e.stopPropagation();
      if (e.key === 'Enter') void end(true);
      else if (e.key === 'Escape') void end(false);
    });
    input.addEventListener('blur', () => void end(true));
    input.addEventListener('pointerdown', (e) => e.stopPropagation());
    input.addEventListener('click', (e) => e.stopPropagation());
    input.addEventListener('dblclick', (e) => e.stopPropagation());
  }
}
