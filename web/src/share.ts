// The Share dialog: who watches the active session (presence: the owner,
// named links, the CLI, each viewer's size and who sets the size), and,
// for the owner, its share links: make one (read-only or writable, with
// an expiry and an optional name), shown once with a QR code for a phone,
// and the list to revoke them from. A writable link says plainly that it
// gives full shell access. The server refuses links to anyone but the
// owner too; the page only does not offer them.

import qrcode from 'qrcode-generator';
import { ApiError, share, ShareLink } from './api';
import { copy, toast } from './dialogs';
import { el, icon } from './dom';
import { linkLine, Presence, sizeLine, viewerLine } from './presence';
import './share.css';

/** What the dialog needs of the page. */
export interface ShareHost {
  /** The active session's id, name and this page's viewer id in it; null without one. */
  target(): { id: string; name: string; you: number } | null;
  /** Whether this page's sign-in is the owner's (only the owner shares). */
  owner(): boolean;
  authLost(code?: string): void;
}

const EXPIRIES: [string, number][] = [
  ['in 1 hour', 3600],
  ['in 1 day', 86400],
  ['in 7 days', 7 * 86400],
  ['never', 0],
];

const WRITABLE_WARNING =
  'A writable link gives full shell access: whoever opens it can type any command in this session, as you, and through it read your files and your termkeep token. Share it only with someone you would hand your keyboard to.';

const POLL_MS = 2000;

export class ShareDialog {
  readonly button: HTMLButtonElement;
  private readonly d: HTMLDialogElement;
  private readonly title = el('h2');
  private readonly viewers = el('ul', 'share-viewers');
  private readonly size = el('p', 'hint');
  private readonly create = el('section', 'share-new');
  private readonly nameIn = el('input');
  private readonly writable = el('input');
  private readonly warning = el('p', 'share-warning', WRITABLE_WARNING);
  private readonly expiry = el('select');
  private readonly made = el('section', 'share-made');
  private readonly links = el('ul', 'share-links');
  private readonly linksSec = el('section', 'share-links-sec');
  private timer = 0;
  private id = '';

  constructor(private readonly host: ShareHost) {
    this.button = el('button', 'icon-btn');
    this.button.id = 'btn-share';
    this.button.type = 'button';
    this.button.title = 'Share this session, see who is watching';
    this.button.setAttribute('aria-label', 'Share and presence');
    // An icon as the bar's other tools: the word took a phone's room for
    // the session's name.
    this.button.append(icon(['M5.6 7.2l4.8-2.4M5.6 8.8l4.8 2.4'], [[12, 4, 1.75], [4, 8, 1.75], [12, 12, 1.75]]));
    this.button.addEventListener('click', () => void this.open());

    this.d = el('dialog');
    this.d.id = 'share';
    this.d.setAttribute('aria-labelledby', 'share-title');
    this.title.id = 'share-title';
    const form = el('form');
    form.method = 'dialog';
    form.addEventListener('submit', (e) => {
      // Enter in the name field makes the link; the Close button closes.
      if ((e.submitter as HTMLButtonElement | null)?.value !== 'close') {
        e.preventDefault();
        void this.makeLink();
      }
    });

    const watching = el('section', 'share-presence');
    watching.append(el('h3', undefined, 'Watching now'), this.viewers, this.size);

    this.nameIn.id = 'share-name';
    this.nameIn.maxLength = 64;
    this.nameIn.placeholder = 'optional, e.g. phone';
    this.nameIn.autocomplete = 'off';
    const nameLabel = el('label', 'share-field', 'Name ');
    nameLabel.append(this.nameIn);
    this.writable.type = 'checkbox';
    this.writable.id = 'share-writable';
    const wLabel = el('label', 'share-check');
    wLabel.append(this.writable, document.createTextNode(' Writable: can type into the session (otherwise read-only: watch only)'));
    this.warning.id = 'share-warning';
    this.warning.setAttribute('role', 'alert');
    this.warning.hidden = true;
    this.writable.addEventListener('change', () => (this.warning.hidden = !this.writable.checked));
    this.expiry.id = 'share-expiry';
    for (const [text, secs] of EXPIRIES) {
      const o = el('option', undefined, text);
      o.value = String(secs);
      this.expiry.append(o);
    }
    this.expiry.value = '86400';
    const expLabel = el('label', 'share-field', 'Expires ');
    expLabel.append(this.expiry);
    const makeBtn = el('button', 'btn primary', 'Create link');
    makeBtn.id = 'share-create';
    makeBtn.type = 'submit';
    makeBtn.value = 'create';
    this.create.append(el('h3', undefined, 'New link'), nameLabel, wLabel, this.warning, expLabel, makeBtn);

    this.made.id = 'share-made';
    this.made.hidden = true;
    this.linksSec.append(el('h3', undefined, 'Links to this session'), this.links);

    const buttons = el('div', 'dialog-buttons');
    const close = el('button', 'btn', 'Close');
    close.value = 'close';
    buttons.append(close);
    form.append(this.title, watching, this.create, this.made, this.linksSec, buttons);
    this.d.append(form);
    this.d.addEventListener('close', () => {
      window.clearInterval(this.timer);
      this.timer = 0;
      this.made.hidden = true;
      this.made.textContent = '';
    });
    document.body.append(this.d);
  }

  /** open shows the dialog for the active session. */
  async open(): Promise<void> {
    const t = this.host.target();
    if (!t) return;
    this.id = t.id;
    this.title.textContent = `Share “${t.name}”`;
    const owner = this.host.owner();
    this.create.hidden = this.linksSec.hidden = !owner;
    this.writable.checked = false;
    this.warning.hidden = true;
    this.nameIn.value = '';
    if (!this.d.open) this.d.showModal();
    (owner ? this.nameIn : (this.d.querySelector('button[value="close"]') as HTMLElement)).focus();
    window.clearInterval(this.timer);
    this.timer = window.setInterval(() => void this.showViewers(), POLL_MS);
    await Promise.all([this.showViewers(), owner ? this.showLinks() : Promise.resolve()]);
  }

  private failed(e: unknown, where: HTMLElement): void {
    if (e instanceof ApiError && e.status === 401) {
      this.d.close();
      this.host.authLost(e.code);
      return;
    }
    where.textContent = e instanceof Error ? e.message : String(e);
  }

  private async showViewers(): Promise<void> {
    const id = this.id;
    let p: Presence;
    try {
      p = await share.viewers(id);
    } catch (e) {
      if (id === this.id) this.failed(e, this.size);
      return;
    }
    if (id !== this.id || !this.d.open) return;
    const you = this.host.target()?.id === id ? this.host.target()!.you : 0;
    this.viewers.textContent = '';
    for (const v of p.viewers) {
      const line = viewerLine(v, you);
      const li = el('li');
      li.dataset.kind = v.kind;
      if (v.holds_size) li.classList.add('holds-size');
      li.append(el('strong', undefined, line.who), el('small', undefined, line.detail));
      this.viewers.append(li);
    }
    if (p.viewers.length === 0) this.viewers.append(el('li', 'hint', 'Nobody is watching.'));
    this.size.textContent = sizeLine(p, you);
  }

  private async showLinks(): Promise<void> {
    const id = this.id;
    let list: ShareLink[];
    try {
      list = await share.links(id);
    } catch (e) {
      if (id === this.id) this.failed(e, this.links);
      return;
    }
    if (id !== this.id) return;
    this.links.textContent = '';
    const now = Date.now();
    for (const t of list) {
      const line = linkLine(t, now);
      const li = el('li');
      li.dataset.id = t.id;
      if (!t.read_only) li.classList.add('writable');
      const what = el('div');
      what.append(el('strong', undefined, line.who), el('small', undefined, line.detail));
      const btn = el('button', 'btn danger', 'Revoke');
      btn.type = 'button';
      btn.addEventListener('click', () => void this.revoke(t));
      li.append(what, btn);
      this.links.append(li);
    }
    if (list.length === 0) this.links.append(el('li', 'hint', 'No links yet.'));
  }

  private async makeLink(): Promise<void> {
    const id = this.id;
    let link: ShareLink;
    try {
      link = await share.create(id, {
        name: this.nameIn.value.trim() || undefined,
        writable: this.writable.checked || undefined,
        expires_in: Number(this.expiry.value) || undefined,
      });
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) this.failed(e, this.links);
      else toast(`Could not make a link: ${(e as Error).message}`);
      return;
    }
    if (id !== this.id || !link.url) return;
    this.showMade(link);
    await this.showLinks();
  }

  /** showMade shows a new link's address once: as text to copy and as a QR code to scan with a phone. */
  private showMade(link: ShareLink): void {
    const url = link.url!;
    this.made.textContent = '';
    const qr = qrSvg(url);
    qr.setAttribute('role', 'img');
    qr.setAttribute('aria-label', 'QR code of the link');
    const field = el('input');
    field.id = 'share-url';
    field.readOnly = true;
    field.value = url;
    field.setAttribute('aria-label', 'The link');
    field.addEventListener('focus', () => field.select());
    const btn = el('button', 'btn', 'Copy');
    btn.type = 'button';
    btn.id = 'share-copy';
    btn.addEventListener('click', () => {
      copy(url, 'select');
      toast('Link copied');
    });
    const row = el('div', 'share-url-row');
    row.append(field, btn);
    const what = link.read_only ? 'read-only: it watches, never types' : 'WRITABLE: full shell access';
    const note = el('p', 'hint', `Shown this once. ${link.name ? `“${link.name}”, ` : ''}${what}. Scan the code with a phone, or send the link; revoke it below.`);
    this.made.append(qr, row, note);
    if (!link.read_only) this.made.append(el('p', 'share-warning', WRITABLE_WARNING));
    this.made.hidden = false;
    this.made.scrollIntoView({ block: 'nearest' });
  }

  private async revoke(t: ShareLink): Promise<void> {
    try {
      await share.revoke(this.id, t.id);
      toast(`Revoked ${t.name ? `“${t.name}”` : t.id}: its viewers are disconnected.`);
    } catch (e) {
      this.failed(e, this.links);
      return;
    }
    await Promise.all([this.showLinks(), this.showViewers()]);
  }
}

/** qrSvg draws text as a QR code: an SVG of its dark modules, scaled by CSS. */
function qrSvg(text: string): SVGSVGElement {
  const qr = qrcode(0, 'M');
  qr.addData(text);
  qr.make();
  const n = qr.getModuleCount();
  const margin = 4; // the quiet zone scanners want
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', `0 0 ${n + 2 * margin} ${n + 2 * margin}`);
  svg.setAttribute('class', 'share-qr');
  svg.setAttribute('shape-rendering', 'crispEdges');
  const bg = document.createElementNS(ns, 'rect');
  bg.setAttribute('width', '100%');
  bg.setAttribute('height', '100%');
  bg.setAttribute('fill', '#fff');
  let d = '';
  for (let r = 0; r < n; r++) for (let c = 0; c < n; c++) if (qr.isDark(r, c)) d += `M${c + margin} ${r + margin}h1v1h-1z`;
  const path = document.createElementNS(ns, 'path');
  path.setAttribute('d', d);
  path.setAttribute('fill', '#000');
  svg.append(bg, path);
  return svg;
}
