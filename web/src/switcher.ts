// The tab switcher of small screens: one button in the bar with the
// active session's name whole (the tabs do not fit a phone), and a list of
// every session to go to. The page owns the sessions and their order.

import { $, el } from './dom';
import { swipeStep } from './gestures';
import type { QuietNote } from './quiet';
import type { TermSession } from './session';
import { badge, label, shortPath } from './tabinfo';

/** What the switcher needs of the page. */
export interface SwitcherHost {
  readonly sessions: ReadonlyMap<string, TermSession>;
  readonly activeId: string | null;
  order(): readonly string[];
  activate(id: string): void;
  cycle(delta: number): void;
  /** quiet is a session's quiet badge, if it has news (quiet.ts): the tabs' own, which a phone does not show. */
  quiet(ts: TermSession): QuietNote | null;
}

export class TabSwitcher {
  private readonly btn = $('switcher') as HTMLButtonElement;
  private readonly dialog = $('tab-list') as HTMLDialogElement;
  private readonly items = $('tab-list-items');

  constructor(private readonly host: SwitcherHost) {
    // A swipe across the button goes to the next or previous session; a tap opens the list.
    let from: { x: number; y: number } | null = null;
    let swiped = false;
    this.btn.addEventListener('pointerdown', (e) => {
      from = { x: e.clientX, y: e.clientY };
      swiped = false;
    });
    this.btn.addEventListener('pointerup', (e) => {
      const step = from ? swipeStep(e.clientX - from.x, e.clientY - from.y) : 0;
      from = null;
      if (!step) return;
      swiped = true;
      host.cycle(step);
    });
    this.btn.addEventListener('click', () => {
      if (swiped) swiped = false;
      else this.open();
    });
    this.items.addEventListener('click', (e) => this.choose(e.target));
    this.items.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        this.choose(e.target);
      }
    });
    // A tap on the backdrop (outside the list's box) closes it.
    this.dialog.addEventListener('click', (e) => {
      if (e.target === this.dialog) this.dialog.close();
    });
  }

  private ids(): string[] {
    return this.host.order().filter((id) => this.host.sessions.has(id));
  }

  /** render shows the active session on the button; the open list follows too. */
  render(): void {
    const ts = this.host.activeId ? this.host.sessions.get(this.host.activeId) : undefined;
    const ids = this.ids();
    const name = ts ? label(ts) : 'No session';
    (this.btn.querySelector('.switcher-name') as HTMLElement).textContent = name;
    (this.btn.querySelector('.dot') as HTMLElement).dataset.state = ts ? badge(ts).cls : '';
    const n = ts ? ids.indexOf(ts.id) + 1 : 0;
    (this.btn.querySelector('.switcher-count') as HTMLElement).textContent = ids.length ? `${n}/${ids.length}` : '';
    // Its name is what it shows (and ": all sessions"), as a speech user says it.
    this.btn.title = ts ? `${name}: ${badge(ts).title}` : '';
    if (this.dialog.open) this.fill();
  }

  open(): void {
    this.fill();
    this.dialog.showModal();
    (this.items.querySelector('[aria-selected="true"]') as HTMLElement | null)?.focus();
  }

  private fill(): void {
    const rows = this.ids().map((id) => {
      const ts = this.host.sessions.get(id)!;
      const b = badge(ts);
      const row = el('div', 'tab-list-item');
      row.setAttribute('role', 'option');
      row.tabIndex = 0;
      row.dataset.id = id;
      row.dataset.state = b.cls;
      row.setAttribute('aria-selected', String(id === this.host.activeId));
      const main = el('span', 'tab-list-main');
      main.append(el('span', 'tab-list-name', label(ts)));
      const cwd = ts.oscCwd || ts.info.cwd || '';
      if (cwd) main.append(el('span', 'tab-list-cwd', shortPath(cwd)));
      row.append(el('span', 'dot'), main);
      const q = this.host.quiet(ts);
      if (q) {
        const qb = el('span', 'quiet', q.text);
        qb.title = q.title;
        row.append(qb);
      }
      row.append(el('span', `badge ${b.cls}`, b.text));
      return row;
    });
    this.items.replaceChildren(...rows);
  }

  private choose(target: EventTarget | null): void {
    const row = (target as HTMLElement | null)?.closest<HTMLElement>('[data-id]');
    if (!row?.dataset.id) return;
    this.dialog.close();
    this.host.activate(row.dataset.id);
  }
}
