// The page: a tab per session, the visible terminal, and everything around
// them. App is the composition root: it owns the sessions, their order and
// which one is active, and wires the modules that do the rest: the tab bar
// (tabs.ts), shortcuts (shortcuts.ts), the extra-keys row (keyrow.ts),
// scrollback search (search.ts), the event stream (feed.ts), dialogs and
// toasts (dialogs.ts), sign-ins (account.ts), the stage (stage.ts), the
// replay (replay.ts), the phone's tab switcher (switcher.ts), touch
// gestures (touch.ts), settings (settings.ts), what a screen reader is told
// (announce.ts); and the page lifecycle: back/forward cache, sleep, network
// changes.

import { api, ApiError, Session } from './api';
import { credentialId, forget, signIn } from './auth';
import { Account, askSwitch, signInAgain } from './account';
import { announcement, Heard } from './announce';
import { confirm, copy, fatal, toast } from './dialogs';
import { $, el, readJSON, sleep, writeStorage } from './dom';
import { EventFeed } from './feed';
import { KeyRow } from './keyrow';
import { applyPageTheme, clampFont, loadPrefs, Prefs, savePrefs } from './prefs';
import { ReplayView } from './replay';
import { ScrollbackSearch } from './search';
import { SessionHooks, TermSession } from './session';
import { Settings } from './settings';
import { bindShortcuts, terminalKey } from './shortcuts';
import { renderBanner, renderOverlay } from './stage';
import { badge, commandName, label, quietSince } from './tabinfo';
import { cycled, merged, moved, savedOrder } from './taborder';
import { TabBar } from './tabs';
import { TabSwitcher } from './switcher';
import { TouchGestures } from './touch';

const LAYOUT_KEY = 'termkeep.tabs';
const ACTIVE_KEY = 'termkeep.active';

interface Layout {
  order: string[];
  active: string | null;
}

export class App {
  readonly sessions = new Map<string, TermSession>();
  private tabOrder: string[] = [];
  activeId: string | null = null;
  readonly prefs: Prefs;
  private refreshTimer = 0;
  private refreshing: Promise<void> | null = null;
  private refreshAgain = false;
  private booted = false;
  private suspended = false;
  /** Whether this page's token may create sessions (GET /api/me): not a share link, not read-only. */
  canCreate = true;
  private readonly hooks: SessionHooks;
  readonly replay: ReplayView;
  private readonly tabs: TabBar;
  private readonly search: ScrollbackSearch;
  private readonly keyRow: KeyRow;
  private readonly feed: EventFeed;
  private readonly account: Account;
  private readonly switcher: TabSwitcher;
  private readonly settings: Settings;
  /** heard is each session as the screen reader was last told of it (announce.ts). */
  private readonly heard = new Map<string, Heard>();

  private readonly termsEl = $('terminals');

  constructor() {
    this.prefs = loadPrefs();
    this.hooks = {
      changed: (ts) => this.sessionChanged(ts),
      gone: (ts) => this.removeSession(ts.id),
      authLost: () => this.signedOut('This browser is signed out', 'Its sign-in expired (14 days unused) or was revoked. Run `termkeep url` on the machine that runs termkeep and open the address it prints to sign in again.'),
      clipboard: (text, why) => copy(text, why),
      notice: (text) => toast(text),
      filterInput: (d) => this.keyRow.apply(d),
    };
    this.replay = new ReplayView(this.prefs, {
      // The address is a link to the moment shown (#replay=ID&t=MS).
      moved: (id, t) => history.replaceState(history.state, '', `#replay=${encodeURIComponent(id)}&t=${Math.round(t)}`),
      closed: () => {
        if (location.hash) history.replaceState(history.state, '', location.pathname + location.search);
        this.active()?.focus();
      },
      authLost: () => this.hooks.authLost(),
    });
    this.tabs = new TabBar(this);
    this.search = new ScrollbackSearch({ active: () => this.active(), theme: () => this.prefs.theme });
    this.keyRow = new KeyRow(() => this.active(), this.prefs.extraKeys);
    this.switcher = new TabSwitcher(this);
    this.settings = new Settings({
      prefs: this.prefs,
      prefsChanged: () => this.prefsChanged(),
      openAccount: () => void this.account.openBrowsers(),
    });
    new TouchGestures(this, this.termsEl);
    this.feed = new EventFeed({
      sessions: this.sessions,
      live: () => !this.suspended && this.booted,
      authLost: () => this.hooks.authLost(),
      refreshSoon: (delay) => this.refreshSoon(delay),
      removeSession: (id) => this.removeSession(id),
      revived: (ts) => {
        this.tabs.render(ts);
        this.renderStage();
      },
    });
    this.account = new Account({ authLost: () => this.hooks.authLost(), signedOut: (title, text) => this.signedOut(title, text) });
  }

  /** active is the session of the active tab. */
  active(): TermSession | undefined {
    return this.activeId ? this.sessions.get(this.activeId) : undefined;
  }

  order(): readonly string[] {
    return this.tabOrder;
  }

  /** setOrder takes a new order of the tabs (a drag) and keeps it. */
  setOrder(order: string[]): void {
    this.tabOrder = order;
    this.saveLayout();
  }

  get fontSize(): number {
    return this.prefs.fontSize;
  }

  // ---- start -------------------------------------------------------------

  async start(): Promise<void> {
    this.applyTheme();
    this.bindChrome();
    bindShortcuts(this);
    this.bindLifecycle();
    this.updateKeysRow();
    // A link for someone else never replaces this browser's sign-in
    // without asking: any site can send a browser to /#token=….
    const signed = await signIn(askSwitch);
    if (!signed.ok) {
      if (signed.why === 'none') this.signedOut('Sign in to termkeep', 'Run `termkeep url` on the machine that runs termkeep and open the address it prints. This browser then stays signed in until it is unused for 14 days or signed out.');
      else this.signedOut('This sign-in link does not work', 'Its token is wrong, expired or revoked. Run `termkeep url` on the machine that runs termkeep (or ask for a new share link) and open the address it prints.');
      return;
    }
    const layout = readJSON<Layout>(localStorage, LAYOUT_KEY);
    this.tabOrder = savedOrder(layout?.order);
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
        fatal('Connecting to termkeep…', 'The termkeep server is not answering. Sessions keep running meanwhile; this page tries again on its own.');
        await sleep(Math.min(10000, 500 * 2 ** attempt) * (0.5 + Math.random() / 2));
      }
    }
    $('fatal').hidden = true;
    this.setCanCreate((await me)?.can_create ?? true);
    this.reconcile(list);
    const first = wantActive && this.sessions.has(wantActive) ? wantActive : this.tabOrder[0] ?? null;
    if (first) this.activate(first);
    // The active terminal is open and fitted now: it connects with its
    // size, so its snapshot is drawn at the size it will show.
    if (first) this.sessions.get(first)!.fitNow();
    for (const id of new Set([first, ...this.tabOrder])) if (id) this.sessions.get(id)?.connect();
    this.booted = true;
    this.renderStage();
    this.feed.start();
    this.followHash();
    window.addEventListener('hashchange', () => {
      // A sign-in link opened in this page's own window (only its
      // fragment differs, so the page stays): sign in as at start.
      if (new URLSearchParams(location.hash.slice(1)).has('token')) void signInAgain();
      else this.followHash();
    });
    window.setInterval(() => {
      for (const ts of this.sessions.values()) {
        ts.tick();
        // Output after a quiet spell takes the tab's quiet badge away.
        if ((this.tabs.tab(ts.id)?.dataset.quiet === '1') !== (quietSince(ts) !== null)) this.tabs.render(ts);
      }
      renderOverlay(this.active());
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
      this.tabs.render(ts);
    }
    for (const id of [...this.sessions.keys()]) if (!ids.has(id)) this.removeSession(id);
    fresh.sort((a, b) => a.created_at.localeCompare(b.created_at));
    for (const s of fresh) this.addSession(s);
    this.tabOrder = merged(this.tabOrder, [...this.sessions.keys()]);
    this.tabs.layout();
    this.switcher.render();
    this.saveLayout();
    this.renderStage();
  }

  private addSession(s: Session): TermSession {
    const existing = this.sessions.get(s.id);
    if (existing) return existing;
    const ts = new TermSession(s, this.hooks, this.prefs, this.termsEl);
    this.sessions.set(s.id, ts);
    if (!this.tabOrder.includes(s.id)) this.tabOrder.push(s.id);
    ts.search.onDidChangeResults((r) => {
      if (ts.id === this.activeId) this.search.count(r.resultIndex, r.resultCount);
    });
    ts.term.attachCustomKeyEventHandler(terminalKey);
    ts.viewers = s.viewers ?? 0;
    this.tabs.render(ts);
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
    const idx = this.tabOrder.indexOf(id);
    this.sessions.delete(id);
    this.heard.delete(id);
    this.tabOrder = this.tabOrder.filter((x) => x !== id);
    this.tabs.remove(id);
    this.switcher.render();
    ts.dispose();
    if (this.replay.id === id) this.replay.close();
    if (this.activeId === id) {
      this.activeId = null;
      const next = this.tabOrder[Math.min(idx, this.tabOrder.length - 1)];
      if (next) this.activate(next);
    }
    this.saveLayout();
    this.renderStage();
  }

  private sessionChanged(ts: TermSession): void {
    this.tabs.render(ts);
    this.switcher.render();
    this.announce(ts);
    if (ts.id === this.activeId) this.renderStage();
  }

  /** announce tells a screen reader what changed in a session that is news (announce.ts). */
  private announce(ts: TermSession): void {
    const b = badge(ts);
    const ended = ts.exit || ts.info.state !== 'running' || ts.state === 'ended' || ts.state === 'gone';
    const now: Heard = { conn: ts.state, ended: ended ? b.cls : '', text: b.text };
    const { say, heard } = announcement(label(ts), this.heard.get(ts.id), now, ts.id === this.activeId);
    this.heard.set(ts.id, heard);
    if (!say) return;
    // A line of its own each, so that two in one moment are both read
    // (a replaced text is read once, the last); the last few are kept.
    const region = $('announce');
    region.append(el('div', undefined, say));
    while (region.childElementCount > 3) region.firstElementChild?.remove();
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
    const active = this.active();
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
          toast(`Could not create a session: ${(e2 as Error).message}`);
          return;
        }
      } else {
        toast(`Could not create a session: ${(e as Error).message}`);
        return;
      }
    }
    this.addSession(s);
    this.tabs.layout();
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
      const name = label(ts);
      const what = ts.info.pid ? `${commandName(ts.info)} (pid ${ts.info.pid})` : commandName(ts.info);
      const ok = await confirm(
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
        toast(`Could not close the session: ${(e as Error).message}`);
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
    const prev = this.active();
    if (prev) {
      prev.search.clearDecorations();
      prev.hide();
    }
    this.tabs.select(prev?.id ?? null, id);
    this.activeId = id;
    ts.show();
    this.tabs.render(ts);
    this.switcher.render();
    writeStorage(sessionStorage, ACTIVE_KEY, id);
    this.saveLayout();
    this.renderStage();
    if (this.search.isOpen) this.search.run(true);
    // Let the layout settle before taking the focus (and fitting again).
    requestAnimationFrame(() => {
      if (this.activeId !== id) return;
      ts.fitNow();
      const typing = document.activeElement?.tagName === 'INPUT' || ($('dialog') as HTMLDialogElement).open;
      if (!this.tabs.renaming && !typing && !this.replay.isOpen) ts.focus();
    });
  }

  cycle(delta: number): void {
    const id = cycled(this.tabOrder, this.activeId, delta);
    if (id) this.activate(id);
  }

  moveActive(delta: number): void {
    const order = moved(this.tabOrder, this.activeId, delta);
    if (!order) return;
    this.tabOrder = order;
    this.tabs.layout();
    this.saveLayout();
  }

  startRename(id: string): void {
    this.tabs.startRename(id);
  }

  openSearch(): void {
    this.search.open();
  }

  private saveLayout(): void {
    writeStorage(localStorage, LAYOUT_KEY, JSON.stringify({ order: this.tabOrder, active: this.activeId } satisfies Layout));
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
      this.tabs.render(ts);
      if (r.notices?.length) toast(r.notices.join('\n'));
    } catch (e) {
      toast(`Could not restore: ${(e as Error).message}`);
    } finally {
      btn.disabled = false;
      this.renderStage();
    }
  }

  private renderStage(): void {
    const empty = this.booted && this.sessions.size === 0;
    $('empty').hidden = !empty;
    const ts = this.active();
    renderOverlay(ts);
    renderBanner(ts);
    if (!ts) document.title = 'termkeep';
    ($('btn-replay') as HTMLButtonElement).disabled = !ts;
  }

  /** signedOut drops the credential and everything it reached: the tabs and the event stream. */
  private signedOut(title: string, text: string): void {
    forget();
    this.feed.close();
    this.booted = false;
    for (const id of [...this.sessions.keys()]) this.sessions.get(id)?.dispose();
    this.sessions.clear();
    this.tabs.clear();
    this.activeId = null;
    $('bar').dataset.signedOut = '1';
    fatal(title, text);
  }

  // ---- chrome: buttons, preferences ----------------------------------------

  private bindChrome(): void {
    $('new-tab').addEventListener('click', () => void this.newSession());
    $('empty-new').addEventListener('click', () => void this.newSession());
    $('btn-search').addEventListener('click', () => this.search.open());
    $('btn-replay').addEventListener('click', () => this.toggleReplay());
    $('banner-replay').addEventListener('click', () => this.openReplay(this.activeId));
    $('btn-font-up').addEventListener('click', () => this.setFont(this.prefs.fontSize + 1));
    $('btn-font-down').addEventListener('click', () => this.setFont(this.prefs.fontSize - 1));
    $('btn-theme').addEventListener('click', () => {
      this.prefs.theme = this.prefs.theme === 'dark' ? 'light' : 'dark';
      savePrefs(this.prefs);
      this.applyTheme();
    });
    $('btn-keys').addEventListener('click', () => {
      this.prefs.keys = this.keyRow.shown ? 'off' : 'on';
      savePrefs(this.prefs);
      this.updateKeysRow();
    });
    $('btn-help').addEventListener('click', () => ($('help') as HTMLDialogElement).showModal());
    $('btn-account').addEventListener('click', () => void this.account.openBrowsers());
    $('btn-settings').addEventListener('click', () => this.settings.open());
    $('sign-out').addEventListener('click', () => void this.account.signOutNow());
    $('overlay-retry').addEventListener('click', () => this.active()?.retryNow());
    $('banner-close').addEventListener('click', () => {
      if (this.activeId) void this.closeSession(this.activeId);
    });
    $('banner-restore').addEventListener('click', () => {
      if (this.activeId) void this.restoreSession(this.activeId);
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
      this.active()?.fitNow();
    });
  }

  setFont(size: number): void {
    this.prefs.fontSize = clampFont(size);
    savePrefs(this.prefs);
    for (const ts of this.sessions.values()) ts.applyPrefs(this.prefs);
    this.replay.applyPrefs(this.prefs);
    toast(`Text size ${this.prefs.fontSize}px`);
  }

  /** prefsChanged keeps the preferences the settings dialog changed and applies them. */
  private prefsChanged(): void {
    savePrefs(this.prefs);
    this.applyTheme();
    this.keyRow.setKeys(this.prefs.extraKeys);
  }

  private applyTheme(): void {
    applyPageTheme(this.prefs.theme);
    for (const ts of this.sessions.values()) ts.applyPrefs(this.prefs);
    this.replay.applyPrefs(this.prefs);
  }

  private updateKeysRow(): void {
    const coarse = window.matchMedia?.('(pointer: coarse)').matches ?? false;
    const show = this.prefs.keys === 'on' || (this.prefs.keys === 'auto' && coarse);
    this.keyRow.show(show);
    $('btn-keys').classList.toggle('on', show);
    this.fitActive();
  }

  // ---- the replay view -----------------------------------------------------

  toggleReplay(): void {
    if (this.replay.isOpen) this.replay.close();
    else this.openReplay(this.activeId);
  }

  /** openReplay shows the replay of session id (an id or a name) at moment t, or at its end. */
  private openReplay(ref: string | null, t: number | null = null): void {
    if (!ref) return;
    const ts = this.sessions.get(ref) ?? [...this.sessions.values()].find((x) => x.info.name === ref);
    if (ts && this.activeId !== ts.id) this.activate(ts.id);
    void this.replay.open(ts?.id ?? ref, ts ? label(ts) : ref, t);
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

  // ---- page lifecycle ------------------------------------------------------

  private bindLifecycle(): void {
    window.addEventListener('pagehide', () => {
      // Closing the connections lets the browser keep the page in its
      // back/forward cache; pageshow reconnects them.
      this.suspended = true;
      for (const ts of this.sessions.values()) ts.suspend();
      this.feed.close();
      this.saveLayout();
    });
    window.addEventListener('pageshow', (e) => {
      if (!e.persisted && !this.suspended) return;
      this.suspended = false;
      for (const ts of this.sessions.values()) ts.resume();
      this.feed.start();
      this.refreshSoon(0);
    });
    const wake = () => {
      if (this.suspended) return;
      for (const ts of this.sessions.values()) ts.probe();
      if (!this.feed.open && this.booted) this.feed.start();
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
      if (!this.feed.open && this.booted) this.feed.start();
    });
    window.addEventListener('offline', () => renderOverlay(this.active()));
    window.matchMedia?.('(pointer: coarse)').addEventListener?.('change', () => this.updateKeysRow());
  }

  // ---- test hook -------------------------------------------------------------

  /** hook is window.__termkeep: what the browser tests read. */
  hook(): object {
    const pick = (id?: string) => this.sessions.get(id ?? this.activeId ?? '');
    return {
      active: () => this.activeId,
      credential: () => credentialId(),
      tabs: () => this.tabOrder.filter((id) => this.sessions.has(id)).map((id) => {
        const ts = this.sessions.get(id)!;
        return { id, label: label(ts), state: ts.state, badge: badge(ts).text, viewers: ts.viewers, written: ts.written };
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
      selection: () => this.active()?.term.getSelection() ?? '',
      fontSize: () => this.prefs.fontSize,
      replaySize: () => (this.replay.isOpen ? this.replay.size() : null),
    };
  }
}
