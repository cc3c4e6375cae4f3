// The page: a tab per session, the visible terminal, and everything around
// them (creating, renaming, reordering and closing sessions, the event
// stream that brings sessions made elsewhere, shortcuts, preferences, and
// the page lifecycle: back/forward cache, sleep, network changes).

import { api, ApiError, browsers, BrowserSession, commandName, Event as TkEvent, Session } from './api';
import { credentialId, describe, forget, Principal, signIn, signOut } from './auth';
import { EventStream } from './events';
import { ReplayView } from './replay';
import { ConnState, SessionHooks, TermPrefs, TermSession } from './session';
import { ThemeName } from './theme';

const LAYOUT_KEY = 'termkeep.tabs';
const ACTIVE_KEY = 'termkeep.active';
const PREFS_KEY = 'termkeep.prefs';
const EVENT_KEY = 'termkeep.lastEvent';
const FONT_MIN = 8;
const FONT_MAX = 32;
const FONT_DEFAULT = 14;

interface Prefs extends TermPrefs {
  keys: 'auto' | 'on' | 'off';
}

interface Layout {
  order: string[];
  active: string | null;
}

const EVENT_KINDS = [
  'session.created',
  'session.renamed',
  'session.closed',
  'process.exited',
  'session.interrupted',
  'session.restored',
  'session.paused',
  'session.quiet',
  'session.removed',
  'session.pruned',
  'viewer.attached',
  'viewer.detached',
];

function $(id: string): HTMLElement {
  const el = document.getElementById(id);
  if (!el) throw new Error(`page is missing #${id}`);
  return el;
}

function readJSON<V>(storage: Storage, key: string): V | null {
  try {
    const v = storage.getItem(key);
    return v ? (JSON.parse(v) as V) : null;
  } catch {
    return null;
  }
}

function writeStorage(storage: Storage, key: string, value: string): void {
  try {
    storage.setItem(key, value);
  } catch {
    // private mode or full: preferences are a comfort, not a need
  }
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

const SVG_NS = 'http://www.w3.org/2000/svg';
function icon(paths: string[], circles: [number, number, number][] = []): SVGSVGElement {
  const svg = document.createElementNS(SVG_NS, 'svg');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('aria-hidden', 'true');
  for (const d of paths) {
    const p = document.createElementNS(SVG_NS, 'path');
    p.setAttribute('d', d);
    svg.appendChild(p);
  }
  for (const [cx, cy, r] of circles) {
    const c = document.createElementNS(SVG_NS, 'circle');
    c.setAttribute('cx', String(cx));
    c.setAttribute('cy', String(cy));
    c.setAttribute('r', String(r));
    svg.appendChild(c);
  }
  return svg;
}

/** shortPath shows the end of a directory: "…/src/app". */
function shortPath(p: string): string {
  if (!p) return '';
  const parts = p.split('/').filter(Boolean);
  if (parts.length <= 2) return p;
  return '…/' + parts.slice(-2).join('/');
}

/**
 * interruptedWhy says why an interrupted session ended: the cause the server
 * knows ("the machine restarted", "its holder was killed"), else its reason.
 */
function interruptedWhy(ts: TermSession): string {
  if (ts.info.state === 'interrupted' && ts.info.cause_text) return ts.info.cause_text;
  return ts.exit?.reason || ts.info.reason || '';
}

/** badge is a tab's state as a word and a class. */
function badge(ts: TermSession): { cls: string; text: string; title: string } {
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
  const map: Record<ConnState, { cls: string; text: string; title: string }> = {
    live: { cls: 'live', text: 'live', title: 'connected: output is live' },
    connecting: { cls: 'connecting', text: 'connecting', title: 'connecting to the session' },
    reconnecting: { cls: 'reconnecting', text: 'reconnecting', title: 'the connection dropped; reconnecting' },
    ended: { cls: 'closed', text: 'ended', title: 'the session ended' },
    gone: { cls: 'closed', text: 'removed', title: 'the session was removed' },
  };
  return map[ts.state];
}

/**
 * quietSince is when a running session went quiet (it printed nothing for
 * the server's threshold: it is likely waiting for input), or null: the
 * server's word from the last list, until this page draws output past it.
 */
function quietSince(ts: TermSession): string | null {
  const q = ts.info.quiet_since;
  if (!q || ts.info.state !== 'running' || ts.exit) return null;
  if (ts.written !== null && ts.written > ts.info.end_offset) return null;
  return q;
}

export class App {
  private readonly sessions = new Map<string, TermSession>();
  private order: string[] = [];
  private activeId: string | null = null;
  private readonly tabEls = new Map<string, HTMLElement>();
  private prefs: Prefs;
  private es: EventStream | null = null;
  private esRetry = 0;
  private refreshTimer = 0;
  private refreshing: Promise<void> | null = null;
  private refreshAgain = false;
  private ctrlLatch = false;
  private altLatch = false;
  private toastTimer = 0;
  private renaming: string | null = null;
  private suppressClickUntil = 0;
  private booted = false;
  /** Whether this page's token may create sessions (GET /api/me): not a share link, not read-only. */
  private canCreate = true;
  private readonly hooks: SessionHooks;
  private readonly replay: ReplayView;

  private readonly tabsEl = $('tabs');
  private readonly termsEl = $('terminals');

  constructor() {
    const saved = readJSON<Partial<Prefs>>(localStorage, PREFS_KEY) ?? {};
    const dark = window.matchMedia?.('(prefers-color-scheme: light)').matches ? 'light' : 'dark';
    this.prefs = {
      fontSize: clampFont(saved.fontSize ?? FONT_DEFAULT),
      theme: saved.theme === 'light' || saved.theme === 'dark' ? saved.theme : (dark as ThemeName),
      copyOnSelect: saved.copyOnSelect ?? true,
      webgl: saved.webgl ?? true,
      keys: saved.keys ?? 'auto',
    };
    this.hooks = {
      changed: (ts) => this.sessionChanged(ts),
      gone: (ts) => this.removeSession(ts.id),
      authLost: () => this.signedOut('This browser is signed out', 'Its sign-in expired (14 days unused) or was revoked. Run `termkeep url` on the machine that runs termkeep and open the address it prints to sign in again.'),
      clipboard: (text, why) => this.copy(text, why),
      notice: (text) => this.toast(text),
      filterInput: (d) => this.applyLatches(d),
    };
    this.replay = new ReplayView(this.prefs, {
      // The address is a link to the moment shown (#replay=ID&t=MS).
      moved: (id, t) => history.replaceState(history.state, '', `#replay=${encodeURIComponent(id)}&t=${Math.round(t)}`),
      closed: () => {
        if (location.hash) history.replaceState(history.state, '', location.pathname + location.search);
        const ts = this.activeId ? this.sessions.get(this.activeId) : undefined;
        ts?.focus();
      },
      authLost: () => this.hooks.authLost(),
    });
  }

  // ---- start -------------------------------------------------------------

  async start(): Promise<void> {
    this.applyTheme();
    this.bindChrome();
    this.bindShortcuts();
    this.bindLifecycle();
    this.updateKeysRow();
    // A link for someone else never replaces this browser's sign-in
    // without asking: any site can send a browser to /#token=….
    const signed = await signIn((now, link) => this.askSwitch(now, link));
    if (!signed.ok) {
      if (signed.why === 'none') this.signedOut('Sign in to termkeep', 'Run `termkeep url` on the machine that runs termkeep and open the address it prints. This browser then stays signed in until it is unused for 14 days or signed out.');
      else this.signedOut('This sign-in link does not work', 'Its token is wrong, expired or revoked. Run `termkeep url` on the machine that runs termkeep (or ask for a new share link) and open the address it prints.');
      return;
    }
    const layout = readJSON<Layout>(localStorage, LAYOUT_KEY);
    this.order = Array.isArray(layout?.order) ? layout!.order.filter((x) => typeof x === 'string') : [];
    const wantActive = sessionStorage.getItem(ACTIVE_KEY) ?? layout?.active ?? null;
    // Asked alongside the list; a server without /api/me keeps the buttons.
    const me = api.me().catch(() => null);

    let list: Session[] | null = null;
    for (let attempt = 0; list === null; attempt++) {
      try {
        list = await api.list();
      } catch (e) {
        if (e instanceof ApiError && e.status === 401) {
          this.hooks.authLost();
          return;
        }
        this.fatal('Connecting to termkeep…', 'The termkeep server is not answering. Sessions keep running meanwhile; this page tries again on its own.');
        await sleep(Math.min(10000, 500 * 2 ** attempt) * (0.5 + Math.random() / 2));
      }
    }
    $('fatal').hidden = true;
    this.setCanCreate((await me)?.can_create ?? true);
    this.reconcile(list);
    const first = wantActive && this.sessions.has(wantActive) ? wantActive : this.order[0] ?? null;
    if (first) this.activate(first);
    // The active terminal is open and fitted now: it connects with its
    // size, so its snapshot is drawn at the size it will show.
    if (first) this.sessions.get(first)!.fitNow();
    for (const id of new Set([first, ...this.order])) if (id) this.sessions.get(id)?.connect();
    this.booted = true;
    this.renderStage();
    this.openEvents();
    this.followHash();
    window.addEventListener('hashchange', () => {
      // A sign-in link opened in this page's own window (only its
      // fragment differs, so the page stays): sign in as at start.
      if (new URLSearchParams(location.hash.slice(1)).has('token')) void this.signInAgain();
      else this.followHash();
    });
    window.setInterval(() => {
      for (const ts of this.sessions.values()) {
        ts.tick();
        // Output after a quiet spell takes the tab's quiet badge away.
        if ((this.tabEls.get(ts.id)?.dataset.quiet === '1') !== (quietSince(ts) !== null)) this.renderTab(ts);
      }
      this.renderOverlay();
    }, 1000);
    window.setInterval(() => {
      if (document.visibilityState === 'visible') this.refreshSoon(0);
    }, 15000);
  }

  // ---- sessions --------------------------------------------------------

  /** reconcile makes the tabs match the server's list of sessions. */
  private reconcile(list: Session[]): void {
    const ids = new Set(list.map((s) => s.id));
    const fresh: Session[] = [];
    for (const s of list) {
      const ts = this.sessions.get(s.id);
      if (!ts) {
        fresh.push(s);
        continue;
      }
      // The connection's Exit is newer than a list fetched before it.
      if (ts.exit && s.state === 'running') continue;
      ts.info = s;
      if (ts.state !== 'live' && !ts.exit) ts.viewers = s.viewers ?? ts.viewers;
      this.renderTab(ts);
    }
    for (const id of [...this.sessions.keys()]) if (!ids.has(id)) this.removeSession(id);
    fresh.sort((a, b) => a.created_at.localeCompare(b.created_at));
    for (const s of fresh) this.addSession(s);
    const known = this.order.filter((id) => this.sessions.has(id));
    const rest = [...this.sessions.keys()].filter((id) => !known.includes(id));
    this.order = [...known, ...rest];
    this.layoutTabs();
    this.saveLayout();
    this.renderStage();
  }

  private addSession(s: Session): TermSession {
    const existing = this.sessions.get(s.id);
    if (existing) return existing;
    const ts = new TermSession(s, this.hooks, this.prefs, this.termsEl);
    this.sessions.set(s.id, ts);
    if (!this.order.includes(s.id)) this.order.push(s.id);
    ts.search.onDidChangeResults((r) => {
      if (ts.id === this.activeId) this.searchCount(r.resultIndex, r.resultCount);
    });
    ts.term.attachCustomKeyEventHandler((e) => this.terminalKey(e));
    ts.viewers = s.viewers ?? 0;
    this.renderTab(ts);
    // At start the active tab connects first, with its size (start()).
    if (this.booted) ts.connect();
    this.prepareSoon(ts);
    return ts;
  }

  /** prepareSoon opens a background tab's terminal when the page is idle. */
  private prepareSoon(ts: TermSession): void {
    const run = () => {
      if (this.sessions.get(ts.id) === ts && !ts.active) ts.prepare();
    };
    if (typeof window.requestIdleCallback === 'function') window.requestIdleCallback(run, { timeout: 3000 });
    else setTimeout(run, 300);
  }

  private removeSession(id: string): void {
    const ts = this.sessions.get(id);
    if (!ts) return;
    const idx = this.order.indexOf(id);
    this.sessions.delete(id);
    this.order = this.order.filter((x) => x !== id);
    this.tabEls.get(id)?.remove();
    this.tabEls.delete(id);
    ts.dispose();
    if (this.replay.id === id) this.replay.close();
    if (this.activeId === id) {
      this.activeId = null;
      const next = this.order[Math.min(idx, this.order.length - 1)];
      if (next) this.activate(next);
    }
    this.saveLayout();
    this.renderStage();
  }

  private sessionChanged(ts: TermSession): void {
    this.renderTab(ts);
    if (ts.id === this.activeId) this.renderStage();
  }

  /** refreshSoon re-reads the list (after an event, periodically): the list is the truth, events say when to look. */
  private refreshSoon(delay = 120): void {
    if (!this.booted) return;
    if (this.refreshTimer) return;
    this.refreshTimer = window.setTimeout(() => {
      this.refreshTimer = 0;
      void this.refresh();
    }, delay);
  }

  private async refresh(): Promise<void> {
    if (this.refreshing) {
      this.refreshAgain = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      try {
        this.reconcile(await api.list());
      } catch (e) {
        if (e instanceof ApiError && e.status === 401) this.hooks.authLost();
      } finally {
        this.refreshing = null;
        if (this.refreshAgain) {
          this.refreshAgain = false;
          this.refreshSoon(0);
        }
      }
    })();
    return this.refreshing;
  }

  /**
   * setCanCreate shows or hides what creates sessions: a share link or a
   * read-only token would only be refused (403), so it is not offered.
   */
  private setCanCreate(can: boolean): void {
    this.canCreate = can;
    $('new-tab').hidden = !can;
    $('empty-new').hidden = !can;
    const hint = $('empty-new').nextElementSibling; // the shortcut, under the button
    if (hint instanceof HTMLElement && hint.classList.contains('hint')) hint.hidden = !can;
  }

  async newSession(): Promise<void> {
    if (!this.canCreate) return;
    const active = this.activeId ? this.sessions.get(this.activeId) : undefined;
    const cwd = active ? active.oscCwd || active.info.cwd : undefined;
    const size = active ? { cols: active.term.cols, rows: active.term.rows } : this.guessSize();
    let s: Session;
    try {
      s = await api.create({ ...size, cwd: cwd || undefined });
    } catch (e) {
      if (cwd && e instanceof ApiError && e.status === 400) {
        try {
          s = await api.create({ ...size });
        } catch (e2) {
          this.toast(`Could not create a session: ${(e2 as Error).message}`);
          return;
        }
      } else {
        this.toast(`Could not create a session: ${(e as Error).message}`);
        return;
      }
    }
    this.addSession(s);
    this.layoutTabs();
    this.saveLayout();
    this.activate(s.id);
  }

  private guessSize(): { cols: number; rows: number } {
    const r = this.termsEl.getBoundingClientRect();
    const cw = this.prefs.fontSize * 0.6;
    const ch = this.prefs.fontSize * 1.15 * 1.2;
    return { cols: Math.max(20, Math.floor((r.width - 24) / cw)), rows: Math.max(5, Math.floor((r.height - 8) / ch)) };
  }

  async closeSession(id: string): Promise<void> {
    const ts = this.sessions.get(id);
    if (!ts) return;
    const running = !ts.exit && ts.info.state === 'running';
    if (running) {
      const name = this.label(ts);
      const what = ts.info.pid ? `${commandName(ts.info)} (pid ${ts.info.pid})` : commandName(ts.info);
      const ok = await this.confirm(
        `End “${name}”?`,
        `This stops ${what} and everything running in it, and removes its output. Closing the browser tab instead would keep it running.`,
        'End session',
      );
      if (!ok) {
        ts.focus();
        return;
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
        this.toast(`Could not close the session: ${(e as Error).message}`);
        return;
      }
    }
    this.removeSession(id);
  }

  activate(id: string): void {
    const ts = this.sessions.get(id);
    if (!ts) return;
    // Going to a tab is going to its live terminal.
    if (this.replay.isOpen) this.replay.close();
    if (this.activeId === id) {
      ts.focus();
      return;
    }
    const prev = this.activeId ? this.sessions.get(this.activeId) : undefined;
    if (prev) {
      prev.search.clearDecorations();
      prev.hide();
      const pel = this.tabEls.get(prev.id);
      pel?.classList.remove('active');
      pel?.setAttribute('aria-selected', 'false');
      pel?.setAttribute('tabindex', '-1');
    }
    this.activeId = id;
    ts.show();
    const tel = this.tabEls.get(id);
    tel?.classList.add('active');
    tel?.setAttribute('aria-selected', 'true');
    tel?.setAttribute('tabindex', '0');
    tel?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
    this.renderTab(ts);
    writeStorage(sessionStorage, ACTIVE_KEY, id);
    this.saveLayout();
    this.renderStage();
    if (!$('searchbar').hidden) this.runSearch(true);
    // Let the layout settle before taking the focus (and fitting again).
    requestAnimationFrame(() => {
      if (this.activeId !== id) return;
      ts.fitNow();
      const typing = document.activeElement?.tagName === 'INPUT' || ($('dialog') as HTMLDialogElement).open;
      if (!this.renaming && !typing && !this.replay.isOpen) ts.focus();
    });
  }

  private cycle(delta: number): void {
    if (!this.order.length) return;
    const i = this.activeId ? this.order.indexOf(this.activeId) : 0;
    const n = this.order.length;
    this.activate(this.order[(((i + delta) % n) + n) % n]);
  }

  private moveActive(delta: number): void {
    if (!this.activeId) return;
    const i = this.order.indexOf(this.activeId);
    const j = i + delta;
    if (i < 0 || j < 0 || j >= this.order.length) return;
    [this.order[i], this.order[j]] = [this.order[j], this.order[i]];
    this.layoutTabs();
    this.saveLayout();
  }

  private saveLayout(): void {
    writeStorage(localStorage, LAYOUT_KEY, JSON.stringify({ order: this.order, active: this.activeId } satisfies Layout));
  }

  private label(ts: TermSession): string {
    return ts.info.name || ts.title || `${commandName(ts.info)} ${ts.id.slice(0, 4)}`;
  }

  // ---- tabs --------------------------------------------------------------

  private layoutTabs(): void {
    // Re-append in order (a no-op move for tabs already in place).
    this.order.forEach((id, i) => {
      const t = this.tabEls.get(id);
      if (!t) return;
      if (this.tabsEl.children[i] !== t) this.tabsEl.insertBefore(t, this.tabsEl.children[i] ?? null);
      t.dataset.index = String(i + 1);
    });
  }

  private renderTab(ts: TermSession): void {
    let t = this.tabEls.get(ts.id);
    if (!t) {
      t = this.makeTab(ts.id);
      this.tabEls.set(ts.id, t);
      this.tabsEl.appendChild(t);
      this.layoutTabs();
    }
    if (this.renaming === ts.id) return;
    const b = badge(ts);
    const name = this.label(ts);
    const cwd = ts.oscCwd || ts.info.cwd || '';
    const active = ts.id === this.activeId;
    t.classList.toggle('active', active);
    t.classList.toggle('bell', ts.bell);
    t.dataset.state = b.cls;
    t.setAttribute('aria-selected', String(active));
    t.setAttribute('tabindex', active ? '0' : '-1');
    const lines = [name];
    if (ts.title && ts.title !== name) lines.push(ts.title);
    if (cwd) lines.push(cwd);
    lines.push(`${b.title}${ts.info.pid ? ` · pid ${ts.info.pid}` : ''}`);
    lines.push(`${ts.viewers} viewer${ts.viewers === 1 ? '' : 's'} attached`);
    const quiet = quietSince(ts);
    const quietText = quiet ? `quiet since ${new Date(quiet).toLocaleTimeString()}: waiting for input?` : '';
    if (quiet) lines.push(quietText);
    t.title = lines.join('\n');
    t.dataset.quiet = quiet ? '1' : '';
    const qb = t.querySelector('.quiet') as HTMLElement;
    qb.hidden = !quiet;
    qb.title = quietText;

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
    const close = el('button', 'tab-close');
    close.type = 'button';
    close.title = 'End this session (Alt+Shift+W)';
    close.setAttribute('aria-label', 'End this session');
    close.append(icon(['M4.5 4.5l7 7M11.5 4.5l-7 7']));
    t.append(dot, main, viewers, close);

    close.addEventListener('click', (e) => {
      e.stopPropagation();
      void this.closeSession(id);
    });
    close.addEventListener('pointerdown', (e) => e.stopPropagation());
    t.addEventListener('click', () => {
      // The click that ends a drag is not a click on a tab.
      if (performance.now() < this.suppressClickUntil) return;
      this.activate(id);
    });
    t.addEventListener('auxclick', (e) => {
      if (e.button === 1) {
        e.preventDefault();
        void this.closeSession(id);
      }
    });
    t.addEventListener('dblclick', (e) => {
      if ((e.target as HTMLElement).closest('.tab-close')) return;
      this.startRename(id);
    });
    t.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        this.activate(id);
      } else if (e.key === 'F2') {
        e.preventDefault();
        this.startRename(id);
      } else if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
        e.preventDefault();
        this.cycle(e.key === 'ArrowRight' ? 1 : -1);
        if (this.activeId) this.tabEls.get(this.activeId)?.focus();
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
      this.tabsEl.classList.add('reordering');
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
      this.tabsEl.classList.remove('reordering');
      this.suppressClickUntil = performance.now() + 300;
      if (commit) {
        this.order = [...this.tabsEl.querySelectorAll<HTMLElement>('.tab')].map((x) => x.dataset.id!).filter((x) => this.sessions.has(x));
        this.saveLayout();
      }
      this.layoutTabs();
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
      const kids = [...this.tabsEl.children] as HTMLElement[];
      const i = kids.indexOf(t);
      let j = 0;
      for (const o of kids) {
        if (o === t) continue;
        const r = o.getBoundingClientRect();
        if (e.clientX > r.left + r.width / 2) j++;
      }
      if (j > i) for (let k = i + 1; k <= j; k++) this.tabsEl.insertBefore(kids[k], t);
      else if (j < i) for (let k = i - 1; k >= j; k--) this.tabsEl.insertBefore(kids[k], t.nextSibling);
    });
    t.addEventListener('pointerup', () => finish(true));
    t.addEventListener('pointercancel', () => finish(false));
    t.addEventListener('lostpointercapture', () => finish(true));
  }

  startRename(id: string): void {
    const ts = this.sessions.get(id);
    const t = this.tabEls.get(id);
    if (!ts || !t || this.renaming) return;
    this.renaming = id;
    const nameEl = t.querySelector('.tab-name') as HTMLElement;
    const input = el('input', 'tab-rename');
    input.value = ts.info.name;
    input.placeholder = this.label(ts);
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
          this.toast((e as Error).message);
        }
      }
      this.renderTab(ts);
      if (this.activeId === id) ts.focus();
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

  // ---- the stage: overlay, banner, empty state --------------------------

  /** restoreSession starts an ended session again and follows it. */
  private async restoreSession(id: string): Promise<void> {
    const ts = this.sessions.get(id);
    if (!ts) return;
    const btn = $('banner-restore') as HTMLButtonElement;
    btn.disabled = true;
    try {
      const r = await api.restore(id);
      ts.revive(r.session);
      this.renderTab(ts);
      if (r.notices?.length) this.toast(r.notices.join('\n'));
    } catch (e) {
      this.toast(`Could not restore: ${(e as Error).message}`);
    } finally {
      btn.disabled = false;
      this.renderStage();
    }
  }

  private renderStage(): void {
    const empty = this.booted && this.sessions.size === 0;
    $('empty').hidden = !empty;
    this.renderOverlay();
    const ts = this.activeId ? this.sessions.get(this.activeId) : undefined;
    const banner = $('banner');
    if (ts && (ts.exit || ts.info.state !== 'running')) {
      const b = badge(ts);
      const code = ts.exit ? ts.exit.exit_code : ts.info.exit_code;
      let text: string;
      if (b.cls === 'interrupted') {
        const why = interruptedWhy(ts);
        text = `Interrupted${why ? `: ${why}` : ''}.`;
      }
      else if (b.text === 'paused') text = `Paused${ts.info.reason ? `: ${ts.info.reason}` : ''}.`;
      else if (b.cls === 'closed') text = 'This session was closed.';
      else text = code === null || code === undefined ? 'The process exited.' : `The process exited with status ${code}.`;
      $('banner-text').textContent = text;
      banner.dataset.kind = b.cls;
      $('banner-restore').hidden = $('banner-close').hidden = false;
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
    if (!ts) document.title = 'termkeep';
    ($('btn-replay') as HTMLButtonElement).disabled = !ts;
  }

  private renderOverlay(): void {
    const ts = this.activeId ? this.sessions.get(this.activeId) : undefined;
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
    if (!navigator.onLine) parts.push('This device is offline.');
    else if (ts!.lastError) parts.push(sentence(ts!.lastError));
    parts.push(secs > 0 ? `Trying again in ${secs} s.` : 'Trying now.');
    parts.push('The session keeps running.');
    $('overlay-detail').textContent = parts.join(' ');
    overlay.hidden = false;
  }

  fatal(title: string, text: string): void {
    $('fatal-title').textContent = title;
    $('fatal-text').textContent = text;
    $('fatal').hidden = false;
  }

  /** signedOut drops the credential and everything it reached: the tabs and the event stream. */
  private signedOut(title: string, text: string): void {
    forget();
    this.es?.close();
    this.es = null;
    this.booted = false;
    for (const id of [...this.sessions.keys()]) this.sessions.get(id)?.dispose();
    this.sessions.clear();
    this.tabEls.forEach((el) => el.remove());
    this.tabEls.clear();
    this.activeId = null;
    $('bar').dataset.signedOut = '1';
    this.fatal(title, text);
  }

  // ---- sign-ins: this browser's and the others' ----------------------------

  /** askSwitch asks whether a link's access should replace this browser's sign-in. */
  private askSwitch(now: Principal, link: Principal): Promise<boolean> {
    return this.confirm(
      'Switch who this browser is signed in as?',
      `This link would sign you in as ${describe(link)}. This browser is signed in as ${describe(now)}. Switch to the link's access, or keep the current one?`,
      'Switch',
      'Keep current',
      true,
    );
  }

  /** signInAgain follows a sign-in link opened in this page: a switch starts the page over with the new access. */
  private async signInAgain(): Promise<void> {
    const r = await signIn((now, link) => this.askSwitch(now, link));
    if (r.ok && r.switched) location.reload();
    else if (!r.ok && r.why === 'refused') this.toast('That sign-in link does not work: its token is wrong, expired or revoked.');
  }

  /** openBrowsers shows the browsers signed in with this page's token (all of them for the owner), each with Revoke. */
  private async openBrowsers(): Promise<void> {
    const d = $('browsers') as HTMLDialogElement;
    const list = $('browsers-list');
    list.textContent = 'Loading…';
    if (!d.open) d.showModal();
    let all: BrowserSession[];
    try {
      all = await browsers.list();
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) {
        d.close();
        this.hooks.authLost();
        return;
      }
      list.textContent = e instanceof Error ? e.message : String(e);
      return;
    }
    list.textContent = '';
    for (const b of all.filter((x) => x.state === 'active')) {
      const li = document.createElement('li');
      li.dataset.id = b.id;
      const what = document.createElement('div');
      const name = document.createElement('strong');
      name.textContent = (b.current ? 'This browser — ' : '') + (b.label || 'a browser');
      const detail = document.createElement('small');
      const from = b.from === 'owner' ? 'the owner token' : `token ${b.from}${b.token_name ? ` (${b.token_name})` : ''}`;
      detail.textContent = `${b.id} · ${b.user} · with ${from} · last used ${new Date(b.last_used_at).toLocaleString()}`;
      what.append(name, document.createElement('br'), detail);
      const btn = document.createElement('button');
      btn.type = 'button';
      btn.className = 'btn danger';
      btn.textContent = b.current ? 'Sign out' : 'Revoke';
      btn.addEventListener('click', () => void (b.current ? this.signOutNow() : this.revokeBrowser(b.id)));
      li.append(what, btn);
      list.append(li);
    }
  }

  private async revokeBrowser(id: string): Promise<void> {
    try {
      await browsers.revoke(id);
      this.toast(`Signed out ${id}.`);
    } catch (e) {
      this.toast(e instanceof Error ? e.message : String(e));
    }
    await this.openBrowsers();
  }

  /** signOutNow revokes this page's credential (the server ends its viewers) and forgets it in every tab. */
  private async signOutNow(): Promise<void> {
    const d = $('browsers') as HTMLDialogElement;
    if (d.open) d.close();
    await signOut();
    this.signedOut('Signed out', 'This browser holds no access to termkeep now. Run `termkeep url` on the machine that runs termkeep and open the address it prints to sign in again.');
  }

  // ---- chrome: buttons, search, keys row, dialogs ------------------------

  private bindChrome(): void {
    $('new-tab').addEventListener('click', () => void this.newSession());
    $('empty-new').addEventListener('click', () => void this.newSession());
    $('btn-search').addEventListener('click', () => this.openSearch());
    $('btn-replay').addEventListener('click', () => this.toggleReplay());
    $('banner-replay').addEventListener('click', () => this.openReplay(this.activeId));
    $('btn-font-up').addEventListener('click', () => this.setFont(this.prefs.fontSize + 1));
    $('btn-font-down').addEventListener('click', () => this.setFont(this.prefs.fontSize - 1));
    $('btn-theme').addEventListener('click', () => {
      this.prefs.theme = this.prefs.theme === 'dark' ? 'light' : 'dark';
      this.savePrefs();
      this.applyTheme();
    });
    $('btn-keys').addEventListener('click', () => {
      const shown = !$('keys').hidden;
      this.prefs.keys = shown ? 'off' : 'on';
      this.savePrefs();
      this.updateKeysRow();
    });
    $('btn-help').addEventListener('click', () => ($('help') as HTMLDialogElement).showModal());
    $('btn-account').addEventListener('click', () => void this.openBrowsers());
    $('sign-out').addEventListener('click', () => void this.signOutNow());
    $('overlay-retry').addEventListener('click', () => {
      const ts = this.activeId ? this.sessions.get(this.activeId) : undefined;
      ts?.retryNow();
    });
    $('banner-close').addEventListener('click', () => {
      if (this.activeId) void this.closeSession(this.activeId);
    });
    $('banner-restore').addEventListener('click', () => {
      if (this.activeId) void this.restoreSession(this.activeId);
    });

    const input = $('search-input') as HTMLInputElement;
    input.addEventListener('input', () => this.runSearch(true));
    input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        this.runSearch(false, e.shiftKey);
      } else if (e.key === 'Escape') {
        e.preventDefault();
        this.closeSearch();
      }
    });
    $('search-next').addEventListener('click', () => this.runSearch(false));
    $('search-prev').addEventListener('click', () => this.runSearch(false, true));
    $('search-close').addEventListener('click', () => this.closeSearch());

    const keys = $('keys');
    // Keep the terminal's focus (and a phone's keyboard) when a key is tapped.
    keys.addEventListener('pointerdown', (e) => e.preventDefault());
    keys.addEventListener('click', (e) => {
      const b = (e.target as HTMLElement).closest('button');
      if (b?.dataset.key) this.extraKey(b.dataset.key);
    });

    const ro = new ResizeObserver(() => this.fitActive());
    ro.observe(this.termsEl);
    const vv = window.visualViewport;
    if (vv) {
      const apply = () => document.documentElement.style.setProperty('--app-height', `${Math.round(vv.height)}px`);
      vv.addEventListener('resize', apply);
      apply();
    }
  }

  private fitRaf = 0;
  private fitActive(): void {
    if (this.fitRaf) return;
    this.fitRaf = requestAnimationFrame(() => {
      this.fitRaf = 0;
      const ts = this.activeId ? this.sessions.get(this.activeId) : undefined;
      ts?.fitNow();
    });
  }

  private setFont(size: number): void {
    this.prefs.fontSize = clampFont(size);
    this.savePrefs();
    for (const ts of this.sessions.values()) ts.applyPrefs(this.prefs);
    this.replay.applyPrefs(this.prefs);
    this.toast(`Text size ${this.prefs.fontSize}px`);
  }

  private applyTheme(): void {
    document.documentElement.dataset.theme = this.prefs.theme;
    const meta = document.querySelector('meta[name="theme-color"]');
    meta?.setAttribute('content', this.prefs.theme === 'dark' ? '#101318' : '#f3f5f8');
    for (const ts of this.sessions.values()) ts.applyPrefs(this.prefs);
    this.replay.applyPrefs(this.prefs);
  }

  private savePrefs(): void {
    writeStorage(localStorage, PREFS_KEY, JSON.stringify(this.prefs));
  }

  private updateKeysRow(): void {
    const coarse = window.matchMedia?.('(pointer: coarse)').matches ?? false;
    const show = this.prefs.keys === 'on' || (this.prefs.keys === 'auto' && coarse);
    $('keys').hidden = !show;
    $('btn-keys').classList.toggle('on', show);
    this.fitActive();
  }

  private extraKey(key: string): void {
    const ts = this.activeId ? this.sessions.get(this.activeId) : undefined;
    if (!ts) return;
    if (key === 'ctrl' || key === 'alt') {
      if (key === 'ctrl') this.ctrlLatch = !this.ctrlLatch;
      else this.altLatch = !this.altLatch;
      this.renderLatches();
      ts.focus();
      return;
    }
    const arrows: Record<string, string> = { up: 'A', down: 'B', right: 'C', left: 'D' };
    let data: string;
    if (arrows[key]) {
      const mod = 1 + (this.altLatch ? 2 : 0) + (this.ctrlLatch ? 4 : 0);
      if (mod > 1) data = `\x1b[1;${mod}${arrows[key]}`;
      else data = (ts.term.modes.applicationCursorKeysMode ? '\x1bO' : '\x1b[') + arrows[key];
      this.ctrlLatch = this.altLatch = false;
      this.renderLatches();
    } else if (key === 'esc') {
      data = '\x1b';
    } else if (key === 'tab') {
      data = '\t';
    } else {
      data = this.applyLatches(key);
    }
    ts.sendKeys(data);
    ts.focus();
  }

  /** applyLatches applies a Ctrl or Alt tapped on the extra-keys row to the next key typed. */
  private applyLatches(d: string): string {
    if (!this.ctrlLatch && !this.altLatch) return d;
    let out = d;
    if (this.ctrlLatch && d.length === 1) {
      const c = d.toUpperCase().charCodeAt(0);
      if (c >= 64 && c <= 95) out = String.fromCharCode(c - 64);
      else if (d === ' ' || d === '2') out = '\x00';
      else if (d === '?') out = '\x7f';
    }
    if (this.altLatch) out = '\x1b' + out;
    this.ctrlLatch = this.altLatch = false;
    this.renderLatches();
    return out;
  }

  private renderLatches(): void {
    $('keys').querySelector('[data-key="ctrl"]')?.classList.toggle('latched', this.ctrlLatch);
    $('keys').querySelector('[data-key="alt"]')?.classList.toggle('latched', this.altLatch);
  }

  openSearch(): void {
    const bar = $('searchbar');
    const input = $('search-input') as HTMLInputElement;
    bar.hidden = false;
    input.focus();
    input.select();
    if (input.value) this.runSearch(true);
  }

  private closeSearch(): void {
    $('searchbar').hidden = true;
    $('search-count').textContent = '';
    const ts = this.activeId ? this.sessions.get(this.activeId) : undefined;
    ts?.search.clearDecorations();
    ts?.term.clearSelection();
    ts?.focus();
  }

  private runSearch(incremental: boolean, backwards = false): void {
    const ts = this.activeId ? this.sessions.get(this.activeId) : undefined;
    const q = ($('search-input') as HTMLInputElement).value;
    if (!ts) return;
    if (!q) {
      ts.search.clearDecorations();
      $('search-count').textContent = '';
      return;
    }
    const dark = this.prefs.theme === 'dark';
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
    if (!found) $('search-count').textContent = 'No results';
  }

  private searchCount(index: number, count: number): void {
    const el = $('search-count');
    if (count === 0) el.textContent = 'No results';
    else if (index < 0) el.textContent = `${count}+ results`;
    else el.textContent = `${index + 1} of ${count}`;
  }

  /** confirm asks a question; safe puts the focus on cancel, for a question
   *  a page of another site can make the browser ask (Enter must not say yes). */
  private confirm(title: string, text: string, ok: string, cancel = 'Cancel', safe = false): Promise<boolean> {
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

  toast(text: string): void {
    const t = $('toast');
    t.textContent = text;
    t.hidden = false;
    t.classList.add('show');
    window.clearTimeout(this.toastTimer);
    this.toastTimer = window.setTimeout(() => {
      t.classList.remove('show');
      this.toastTimer = window.setTimeout(() => (t.hidden = true), 250);
    }, 2600);
  }

  private copy(text: string, why: 'osc52' | 'select'): void {
    const done = () => {
      if (why === 'osc52') this.toast(`Copied ${text.length} character${text.length === 1 ? '' : 's'} to the clipboard`);
    };
    if (navigator.clipboard?.writeText) {
      navigator.clipboard.writeText(text).then(done, () => {
        if (fallbackCopy(text)) done();
      });
    } else if (fallbackCopy(text)) {
      done();
    }
  }

  // ---- keyboard ------------------------------------------------------------

  /** terminalKey lets the browser handle Ctrl+Shift+C/V (copy, paste) instead of the terminal. */
  private terminalKey(e: KeyboardEvent): boolean {
    if (e.ctrlKey && e.shiftKey && !e.altKey && (e.code === 'KeyC' || e.code === 'KeyV')) return false;
    return true;
  }

  private bindShortcuts(): void {
    window.addEventListener(
      'keydown',
      (e) => {
        if (this.handleShortcut(e)) {
          e.preventDefault();
          e.stopPropagation();
        }
      },
      true,
    );
  }

  private handleShortcut(e: KeyboardEvent): boolean {
    if (e.isComposing) return false;
    const target = e.target as HTMLElement | null;
    const inField = !!target && target.tagName === 'INPUT';
    const ctrl = e.ctrlKey || e.metaKey;
    const dialog = ($('dialog') as HTMLDialogElement).open || ($('help') as HTMLDialogElement).open;
    if (ctrl && e.shiftKey && !e.altKey && e.code === 'KeyH' && !dialog) {
      this.toggleReplay();
      return true;
    }
    if (this.replay.isOpen && !dialog && this.replay.key(e)) return true;
    if (ctrl && e.shiftKey && !e.altKey && e.code === 'KeyF') {
      if (this.replay.isOpen) this.replay.focusSearch();
      else this.openSearch();
      return true;
    }
    if (inField || dialog) return false;
    if (ctrl && e.shiftKey && !e.altKey && e.code === 'KeyV' && navigator.clipboard?.readText) {
      const ts = this.activeId ? this.sessions.get(this.activeId) : undefined;
      navigator.clipboard.readText().then(
        (t) => {
          if (t) ts?.paste(t);
        },
        () => this.toast('The browser did not allow reading the clipboard: paste with its menu or Ctrl+V there.'),
      );
      return true;
    }
    if (ctrl && e.shiftKey && !e.altKey && e.code === 'KeyC') {
      const ts = this.activeId ? this.sessions.get(this.activeId) : undefined;
      const sel = ts?.term.getSelection();
      if (sel) this.copy(sel, 'select');
      return true;
    }
    if (ctrl && !e.shiftKey && !e.altKey && (e.key === '=' || e.key === '+')) {
      this.setFont(this.prefs.fontSize + 1);
      return true;
    }
    if (ctrl && !e.altKey && (e.key === '-' || e.key === '_')) {
      this.setFont(this.prefs.fontSize - 1);
      return true;
    }
    if (ctrl && !e.shiftKey && !e.altKey && e.key === '0') {
      this.setFont(FONT_DEFAULT);
      return true;
    }
    if (e.altKey && !ctrl && !e.shiftKey && /^Digit[1-9]$/.test(e.code)) {
      const n = Number(e.code.slice(5));
      const id = n === 9 ? this.order[this.order.length - 1] : this.order[n - 1];
      if (id) this.activate(id);
      return true;
    }
    if (e.altKey && e.shiftKey && !ctrl) {
      switch (e.code) {
        case 'KeyT':
          if (!this.canCreate) return false; // the terminal gets the key
          void this.newSession();
          return true;
        case 'KeyW':
          if (this.activeId) void this.closeSession(this.activeId);
          return true;
        case 'KeyR':
          if (this.activeId) this.startRename(this.activeId);
          return true;
        case 'ArrowLeft':
          this.cycle(-1);
          return true;
        case 'ArrowRight':
          this.cycle(1);
          return true;
        case 'PageUp':
          this.moveActive(-1);
          return true;
        case 'PageDown':
          this.moveActive(1);
          return true;
      }
    }
    // While the replay covers it, the live terminal gets no keys (it may
    // still hold the focus, and typing into a shell unseen is a surprise).
    return this.replay.isOpen && !!target?.closest('.term-host');
  }

  // ---- the replay view -----------------------------------------------------

  private toggleReplay(): void {
    if (this.replay.isOpen) this.replay.close();
    else this.openReplay(this.activeId);
  }

  /** openReplay shows the replay of session id (an id or a name) at moment t, or at its end. */
  private openReplay(ref: string | null, t: number | null = null): void {
    if (!ref) return;
    const ts = this.sessions.get(ref) ?? [...this.sessions.values()].find((x) => x.info.name === ref);
    if (ts && this.activeId !== ts.id) this.activate(ts.id);
    void this.replay.open(ts?.id ?? ref, ts ? this.label(ts) : ref, t);
    this.replay.focus();
  }

  /** followHash opens the replay a link asks for: #replay=<session>&t=<Unix ms>. */
  private followHash(): void {
    const h = new URLSearchParams(location.hash.slice(1));
    const ref = h.get('replay');
    if (!ref) {
      this.replay.close();
      return;
    }
    const t = Number(h.get('t'));
    this.openReplay(ref, h.get('t') && Number.isFinite(t) && t > 0 ? t : null);
  }

  // ---- the event stream ---------------------------------------------------

  private openEvents(): void {
    this.es?.close();
    const after = Number(localStorage.getItem(EVENT_KEY) ?? '0') || 0;
    const kinds = new Set(EVENT_KINDS);
    const es: EventStream = new EventStream(`/api/events?after=${after}`, {
      open: () => {
        this.esRetry = 0;
        this.refreshSoon(0);
      },
      event: (kind, data) => {
        if (!kinds.has(kind)) return;
        let e: TkEvent;
        try {
          e = JSON.parse(data) as TkEvent;
        } catch {
          return;
        }
        if (e.id > 0) writeStorage(localStorage, EVENT_KEY, String(e.id));
        this.onEvent(e);
      },
      closed: (status) => {
        if (this.es !== es) return;
        this.es = null;
        if (status === 401) {
          this.hooks.authLost();
          return;
        }
        // Ended (the server restarted, the network went, the sign-in was
        // revoked): start it again with a backoff; a refusal then says so.
        const delay = Math.min(30000, 1000 * 2 ** this.esRetry++) * (0.5 + Math.random() / 2);
        window.setTimeout(() => {
          if (!this.es && !this.suspended && this.booted) this.openEvents();
        }, delay);
      },
    });
    this.es = es;
  }

  private onEvent(e: TkEvent): void {
    // Pruned: removed by the server, past its bound on kept ended sessions.
    if (e.kind === 'session.removed' || e.kind === 'session.pruned') {
      this.removeSession(e.session);
      return;
    }
    if (e.kind === 'session.restored') {
      // Restored elsewhere (the CLI, another tab): follow the new process.
      const ts = this.sessions.get(e.session);
      if (ts?.exit) {
        void api.get(e.session).then((s) => {
          ts.revive(s);
          this.renderTab(ts);
          this.renderStage();
        }, () => this.refreshSoon());
        return;
      }
    }
    if (e.kind === 'viewer.attached' || e.kind === 'viewer.detached') {
      // A connected tab learns its viewers from its own connection.
      const ts = this.sessions.get(e.session);
      if (ts && ts.state === 'live') return;
    }
    this.refreshSoon();
  }

  // ---- page lifecycle ------------------------------------------------------

  private suspended = false;

  private bindLifecycle(): void {
    window.addEventListener('pagehide', () => {
      // Closing the connections lets the browser keep the page in its
      // back/forward cache; pageshow reconnects them.
      this.suspended = true;
      for (const ts of this.sessions.values()) ts.suspend();
      this.es?.close();
      this.es = null;
      this.saveLayout();
    });
    window.addEventListener('pageshow', (e) => {
      if (!e.persisted && !this.suspended) return;
      this.suspended = false;
      for (const ts of this.sessions.values()) ts.resume();
      this.openEvents();
      this.refreshSoon(0);
    });
    const wake = () => {
      if (this.suspended) return;
      for (const ts of this.sessions.values()) ts.probe();
      if (!this.es && this.booted) this.openEvents();
      this.refreshSoon(0);
    };
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible') wake();
    });
    document.addEventListener('resume', wake);
    window.addEventListener('focus', wake);
    window.addEventListener('online', () => {
      for (const ts of this.sessions.values()) {
        ts.retryNow();
        ts.probe(true);
      }
      if (!this.es && this.booted) this.openEvents();
    });
    window.addEventListener('offline', () => this.renderOverlay());
    window.matchMedia?.('(pointer: coarse)').addEventListener?.('change', () => this.updateKeysRow());
  }

  // ---- test hook -------------------------------------------------------------

  /** hook is window.__termkeep: what the browser tests read. */
  hook(): object {
    const pick = (id?: string) => this.sessions.get(id ?? this.activeId ?? '');
    return {
      active: () => this.activeId,
      credential: () => credentialId(),
      tabs: () => this.order.filter((id) => this.sessions.has(id)).map((id) => {
        const ts = this.sessions.get(id)!;
        return { id, label: this.label(ts), state: ts.state, badge: badge(ts).text, viewers: ts.viewers, written: ts.written };
      }),
      screen: (id?: string) => pick(id)?.visibleText() ?? null,
      text: (id?: string) => pick(id)?.allText() ?? null,
      size: (id?: string) => {
        const ts = pick(id);
        return ts ? { cols: ts.term.cols, rows: ts.term.rows } : null;
      },
      renderer: (id?: string) => pick(id)?.renderer ?? null,
      drop: (id?: string) => pick(id)?.drop(),
      replayScreen: () => this.replay.visibleText(),
      replaySize: () => (this.replay.isOpen ? this.replay.size() : null),
    };
  }
}

/** sentence capitalizes a message and ends it with a period. */
function sentence(s: string): string {
  const t = s.trim();
  return t.charAt(0).toUpperCase() + t.slice(1) + (/[.!?]$/.test(t) ? '' : '.');
}

function clampFont(n: number): number {
  return Math.max(FONT_MIN, Math.min(FONT_MAX, Math.round(n) || FONT_DEFAULT));
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => window.setTimeout(r, ms));
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
