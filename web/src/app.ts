// The page: a tab per session, the visible terminal, and everything around
// them. App is the composition root: it owns the sessions, their order and
// which one is active, and wires the modules that do the rest: creating,
// ending and restoring sessions (actions.ts), the tab bar (tabs.ts),
// shortcuts (shortcuts.ts), the extra-keys row (keyrow.ts), scrollback
// search (search.ts), the event stream (feed.ts), dialogs and toasts
// (dialogs.ts), sign-ins (account.ts), the stage (stage.ts), the replay
// (replay.ts), sharing (share.ts), the phone's tab switcher (switcher.ts),
// touch gestures (touch.ts), settings (settings.ts), what a screen reader
// is told (announce.ts, speaker.ts), the page lifecycle (lifecycle.ts:
// back/forward cache, sleep, network changes).

import { api, ApiError, Session } from './api';
import { createSession, endSession, restoreSession, showAccess } from './actions';
import { forget, signIn } from './auth';
import { Account, askSwitch, signInAgain } from './account';
import { askClipboard, copy, dialogOpen, fatal, toast } from './dialogs';
import { decideClipWrite } from './clipwrite';
import { $, readJSON, sleep, writeStorage } from './dom';
import { endedNotice, Holder } from './ended';
import { EventFeed } from './feed';
import { KeyRow } from './keyrow';
import { terminalGets } from './keys';
import { bindLifecycle, testHook } from './lifecycle';
import { Preferences, Prefs } from './prefs';
import { ReplayView } from './replay';
import { ScrollbackSearch } from './search';
import { ShareDialog } from './share';
import { SessionHooks, TermSession } from './session';
import { Settings } from './settings';
import { Speaker } from './speaker';
import { bindShortcuts } from './shortcuts';
import { browserName } from './sizeinfo';
import { renderBanner, renderOverlay, renderSize } from './stage';
import type { QuietNote } from './quiet';
import { QuietWatch } from './quietwatch';
import { label } from './tabinfo';
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
  private readonly looks: Preferences;
  private refreshTimer = 0;
  private refreshing: Promise<void> | null = null;
  private refreshAgain = false;
  private booted = false;
  private suspended = false;
  /** What the user has seen of each session, for the quiet badge. */
  private readonly quietWatch = new QuietWatch(
    (ts) => ts.id === this.activeId && document.visibilityState === 'visible' && !this.suspended,
  );
  /** Who the page is signed in as (GET /api/me), for the notice when its access ends. */
  private holder: Holder | null = null;
  private ending = false;
  /** Whether this page's token may create sessions (GET /api/me): not a share link, not read-only. */
  canCreate = true;
  /** Whether this page may change sessions (end, rename, restore): not a read-only link. */
  canWrite = true;
  /** guest: a share link's or a read-only token's page (or one that could not ask): no program writes its clipboard. */
  private guest = true;
  /** The sessions whose clipboard writes the user allowed "Always for this session" on this page. */
  private readonly clipAllowed = new Set<string>();
  /** Whether Tab moves the focus out of the terminal (Ctrl+Shift+M) instead of reaching the shell. */
  private tabMoves = false;
  private readonly hooks: SessionHooks;
  readonly replay: ReplayView;
  private readonly tabs: TabBar;
  private readonly search: ScrollbackSearch;
  private readonly keyRow: KeyRow;
  readonly feed: EventFeed;
  private readonly account: Account;
  private readonly share: ShareDialog;
  private readonly switcher: TabSwitcher;
  private readonly settings: Settings;
  private readonly speaker = new Speaker();

  private readonly termsEl = $('terminals');

  constructor() {
    this.looks = new Preferences({
      terminals: () => [...this.sessions.values(), this.replay],
      showKeyRow: (on) => this.keyRow.show(on),
      keyRowShown: () => this.keyRow.shown,
      setKeys: (keys) => this.keyRow.setKeys(keys),
      fitActive: () => this.fitActive(),
    });
    this.hooks = {
      changed: (ts) => this.sessionChanged(ts),
      gone: (ts) => this.removeSession(ts.id),
      authLost: (code) => void this.accessEnded(code),
      clipboard: (text, why) => copy(text, why),
      osc52: (ts, text, live, viewOnly) => this.clipWrite(ts, text, live, viewOnly),
      pasted: (removed) =>
        toast(`The paste lost ${removed} control character${removed === 1 ? '' : 's'} (escape sequences cannot run from a paste); Ctrl+Shift+Alt+V pastes as it is.`),
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
      authLost: (code) => this.hooks.authLost(code),
    });
    this.tabs = new TabBar(this);
    this.search = new ScrollbackSearch({ active: () => this.active(), theme: () => this.prefs.theme });
    this.keyRow = new KeyRow(() => this.active(), this.prefs.extraKeys);
    this.switcher = new TabSwitcher(this);
    this.settings = new Settings({
      prefs: this.prefs,
      prefsChanged: () => this.looks.changed(),
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
    this.account = new Account({ authLost: () => this.hooks.authLost(), signedOut: (title, text) => this.signedOut(title, text), signingOut: () => (this.ending = true) });
    this.share = new ShareDialog({
      target: () => {
        const ts = this.active();
        return ts ? { id: ts.id, name: label(ts), you: ts.you } : null;
      },
      owner: () => this.holder?.owner ?? false,
      authLost: (code) => this.hooks.authLost(code),
    });
    $('btn-account').before(this.share.button);
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

  get prefs(): Prefs {
    return this.looks.p;
  }

  get fontSize(): number {
    return this.prefs.fontSize;
  }

  // ---- start -------------------------------------------------------------

  async start(): Promise<void> {
    this.looks.applyTheme();
    this.bindChrome();
    bindShortcuts(this);
    this.bindLifecycle();
    this.looks.updateKeysRow();
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
    let asked = 0;
    for (let attempt = 0; list === null; attempt++) {
      try {
        asked = performance.now();
        list = await api.list();
      } catch (e) {
        if (e instanceof ApiError && e.status === 401) {
          this.hooks.authLost(e.code);
          return;
        }
        fatal('Connecting to termkeep…', 'The termkeep server is not answering. Sessions keep running meanwhile; this page tries again on its own.');
        await sleep(Math.min(10000, 500 * 2 ** attempt) * (0.5 + Math.random() / 2));
      }
    }
    $('fatal').hidden = true;
    const m = await me;
    this.holder = m ? { owner: m.owner } : null;
    this.guest = !m || m.read_only || m.session !== '' || m.workspace !== '';
    this.setAccess(m?.can_create ?? true, !(m?.read_only ?? false));
    this.reconcile(list, asked);
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
        // What the user is looking at is seen; output after a quiet spell
        // takes the tab's quiet badge away.
        if (ts.id === this.activeId && document.visibilityState === 'visible') this.quietWatch.look(ts);
        if ((this.tabs.tab(ts.id)?.dataset.quiet === '1') !== (this.quiet(ts) !== null)) {
          this.tabs.render(ts);
          this.switcher.render();
        }
      }
      renderOverlay(this.active());
    }, 1000);
    window.setInterval(() => {
      if (document.visibilityState === 'visible') this.refreshSoon(0);
    }, 15000);
  }

  // ---- sessions --------------------------------------------------------

  /** reconcile makes the tabs match the server's list of sessions, asked for at asked (performance.now()). */
  private reconcile(list: Session[], asked: number): void {
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
      // A tab that is not attached learns its viewers from the list, but
      // not from one asked for while it was attached: that counts it.
      if (ts.state !== 'live' && !ts.exit && asked > ts.leftLive) ts.viewers = s.viewers ?? ts.viewers;
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
    const ts = new TermSession(s, this.hooks, this.prefs, this.termsEl, browserName(navigator.userAgent));
    this.sessions.set(s.id, ts);
    if (!this.tabOrder.includes(s.id)) this.tabOrder.push(s.id);
    ts.search.onDidChangeResults((r) => {
      if (ts.id === this.activeId) this.search.count(r.resultIndex, r.resultCount);
    });
    ts.term.attachCustomKeyEventHandler((e) => terminalGets(e, this.tabMoves));
    ts.viewers = s.viewers ?? 0;
    // What it printed before this page listed it is no news.
    this.quietWatch.listed(s.id, s.end_offset);
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
    this.quietWatch.forget(id);
    const idx = this.tabOrder.indexOf(id);
    this.sessions.delete(id);
    this.speaker.forget(id);
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
    // The connection says a session was interrupted; the list says why.
    if (ts.exit?.state === 'interrupted' && !ts.info.cause) this.refreshSoon(0);
    this.tabs.render(ts);
    this.switcher.render();
    this.speaker.changed(ts, ts.id === this.activeId);
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
        const asked = performance.now();
        this.reconcile(await api.list(), asked);
      } catch (e) {
        if (e instanceof ApiError && e.status === 401) this.hooks.authLost(e.code);
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

  /** clipWrite applies, asks about or refuses a program's clipboard write (clipwrite.ts). */
  private clipWrite(ts: TermSession, text: string, live: boolean, viewOnly: boolean): void {
    const policy = this.prefs.clipboardWrites;
    switch (decideClipWrite({ guest: this.guest, viewOnly, live, policy, allowedHere: this.clipAllowed.has(ts.id) })) {
      case 'apply':
        copy(text, 'osc52');
        break;
      case 'ask':
        void askClipboard(label(ts), text).then((answer) => {
          if (answer === 'deny') return;
          if (answer === 'session') this.clipAllowed.add(ts.id);
          copy(text, 'osc52');
        });
        break;
    }
  }

  /** setAccess takes what this page's token may do (GET /api/me) and shows only that. */
  private setAccess(canCreate: boolean, canWrite: boolean): void {
    this.canCreate = canCreate;
    this.canWrite = canWrite;
    showAccess(canCreate, canWrite);
    for (const ts of this.sessions.values()) this.tabs.render(ts);
    this.renderStage();
  }

  async newSession(): Promise<void> {
    if (!this.canCreate) return;
    const active = this.active();
    const cwd = active ? active.oscCwd || active.info.cwd : undefined;
    // A new session starts at this window's size, whatever the active one's is.
    const s = await createSession(active?.size.want ?? this.guessSize(), cwd);
    if (!s) return;
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
    if (ts && this.canWrite && (await endSession(ts))) this.removeSession(id);
  }

  /** activate shows session id's tab; focusTerminal gives its terminal the keyboard. */
  activate(id: string, focusTerminal = true): void {
    const ts = this.sessions.get(id);
    if (!ts) return;
    // Going to a tab is going to its live terminal.
    if (this.replay.isOpen) this.replay.close();
    if (this.activeId === id) {
      if (focusTerminal) ts.focus();
      return;
    }
    const prev = this.active();
    if (prev) {
      this.quietWatch.look(prev);
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
    const takeFocus = () => {
      const typing = document.activeElement?.tagName === 'INPUT' || ($('dialog') as HTMLDialogElement).open;
      if (focusTerminal && !this.tabs.renaming && !typing && !this.replay.isOpen) ts.focus();
    };
    // At once: hiding the previous terminal dropped the focus to the page,
    // and keys typed before the next frame would be lost. Again once the
    // layout has settled (and the terminal fitted).
    takeFocus();
    requestAnimationFrame(() => {
      if (this.activeId !== id) return;
      ts.fitNow();
      takeFocus();
    });
  }

  cycle(delta: number, focusTerminal = true): void {
    const id = cycled(this.tabOrder, this.activeId, delta);
    if (id) this.activate(id, focusTerminal);
  }

  toggleTabMoves(): void {
    this.tabMoves = !this.tabMoves;
    document.documentElement.dataset.tabMoves = this.tabMoves ? '1' : '';
    toast(this.tabMoves ? 'Tab moves the focus through the page now; Ctrl+Shift+M gives Tab back to the terminal.' : 'Tab goes to the terminal again.');
  }

  /**
   * refocus gives the keyboard back to the terminal (or the replay) after
   * a button or a dialog had it, unless something else took it since.
   */
  private refocus(): void {
    const a = document.activeElement;
    if (a && a !== document.body && a.tagName !== 'BUTTON') return;
    if (dialogOpen()) return;
    if (this.tabs.renaming) return;
    if (this.replay.isOpen) this.replay.focus();
    else this.active()?.focus();
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

  /** quiet is ts's tab's quiet badge (quietwatch.ts). */
  quiet(ts: TermSession): QuietNote | null {
    return this.quietWatch.note(ts);
  }

  // ---- the stage: overlay, banner, empty state --------------------------

  /** restoreSession starts an ended session again and follows it. */
  private async restoreSession(id: string): Promise<void> {
    const ts = this.sessions.get(id);
    if (!ts) return;
    await restoreSession(ts, this.activeId === id);
    this.tabs.render(ts);
    this.renderStage();
    this.refocus();
  }

  private renderStage(): void {
    const empty = this.booted && this.sessions.size === 0;
    $('empty').hidden = !empty;
    const ts = this.active();
    renderOverlay(ts);
    renderBanner(ts, this.canWrite);
    renderSize(ts, this.canWrite);
    if (!ts) document.title = 'termkeep';
    ($('btn-replay') as HTMLButtonElement).disabled = !ts;
    this.share.button.disabled = !ts;
  }

  /**
   * accessEnded follows a refusal of the page's credential: once, with
   * the server's reason (asked for when the refusal did not carry it, as
   * an event stream's or a WebSocket's cannot), and not at all when the
   * credential turns out to work.
   */
  private async accessEnded(code?: string): Promise<void> {
    if (this.ending) return;
    this.ending = true;
    if (code === undefined) {
      try {
        await api.me();
        this.ending = false;
        return;
      } catch (e) {
        // Not a refusal (the server is out of reach): nothing ended.
        if (!(e instanceof ApiError) || e.status !== 401) {
          this.ending = false;
          return;
        }
        code = e.code;
      }
    }
    const n = endedNotice(code, this.holder);
    this.signedOut(n.title, n.text);
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
    this.switcher.render();
    $('bar').dataset.signedOut = '1';
    // Nothing is reconnecting any more: no card says so over the notice.
    this.renderStage();
    fatal(title, text);
    // The notice covers the page; a screen reader is told what it says,
    // and no longer what the sessions it replaces did (reconnecting…).
    this.speaker.notice(`${title}. ${text}`);
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
    $('btn-theme').addEventListener('click', () => this.looks.toggleTheme());
    $('btn-keys').addEventListener('click', () => this.looks.toggleKeys());
    $('btn-fit').addEventListener('click', () => this.fitToWindow());
    $('tab-list-fit').addEventListener('click', () => {
      ($('tab-list') as HTMLDialogElement).close();
      this.fitToWindow();
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

    // After a button of the bar, the banner or the overlay, the keyboard
    // goes back to the terminal (Space must not press the button again);
    // after a dialog closes too. This runs after the button's own handler.
    for (const id of ['bar', 'banner', 'overlay']) $(id).addEventListener('click', () => this.refocus());
    for (const d of document.querySelectorAll('dialog')) d.addEventListener('close', () => this.refocus());

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

  /** fitToWindow gives the active session this window's size ("fit to this window"). */
  fitToWindow(): void {
    if (this.canWrite) this.active()?.fitToWindow();
  }

  setFont(size: number): void {
    this.looks.setFont(size);
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

  // ---- page lifecycle and the tests' view ------------------------------------

  private bindLifecycle(): void {
    bindLifecycle({
      sessions: this.sessions,
      feed: this.feed,
      booted: () => this.booted,
      suspend: (on) => {
        this.suspended = on;
        if (on) this.saveLayout();
      },
      suspended: () => this.suspended,
      refreshSoon: (delay) => this.refreshSoon(delay),
      offline: () => renderOverlay(this.active()),
      pointerChanged: () => this.looks.updateKeysRow(),
      hidden: () => {
        const a = this.active();
        if (a) this.quietWatch.look(a);
      },
    });
  }

  /** hook is window.__termkeep: what the browser tests read. */
  hook(): object {
    return testHook(this, this.replay);
  }
}
