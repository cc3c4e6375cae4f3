// Sign-ins: this browser's and the others'. A sign-in link opened in the
// page, the dialog listing the browsers signed in (each with Revoke), and
// signing this one out.

import { ApiError, browsers, BrowserSession } from './api';
import { describe, Principal, signIn, signOut } from './auth';
import { confirm, toast } from './dialogs';
import { $ } from './dom';

/** What the account dialog needs of the page. */
export interface AccountHost {
  /** authLost: the credential stopped working. */
  authLost(): void;
  /** signedOut drops the tabs and shows why. */
  signedOut(title: string, text: string): void;
  /** signingOut says this page is signing itself out: the viewers the server then cuts are not news. */
  signingOut(): void;
}

/** askSwitch asks whether a link's access should replace this browser's sign-in. */
export function askSwitch(now: Principal, link: Principal): Promise<boolean> {
  return confirm(
    'Switch who this browser is signed in as?',
    `This link would sign you in as ${describe(link)}. This browser is signed in as ${describe(now)}. Switch to the link's access, or keep the current one?`,
    'Switch',
    'Keep current',
    true,
  );
}

/** signInAgain follows a sign-in link opened in this page: a switch starts the page over with the new access. */
export async function signInAgain(): Promise<void> {
  const r = await signIn(askSwitch);
  if (r.ok && r.switched) location.reload();
  else if (!r.ok && r.why === 'refused') toast('That sign-in link does not work: its token is wrong, expired or revoked.');
}

export class Account {
  constructor(private readonly host: AccountHost) {}

  /** openBrowsers shows the browsers signed in with this page's token (all of them for the owner), each with Revoke. */
  async openBrowsers(): Promise<void> {
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
        this.host.authLost();
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
      toast(`Signed out ${id}.`);
    } catch (e) {
      toast(e instanceof Error ? e.message : String(e));
    }
    await this.openBrowsers();
  }

  /** signOutNow revokes this page's credential (the server ends its viewers) and forgets it in every tab. */
  async signOutNow(): Promise<void> {
    const d = $('browsers') as HTMLDialogElement;
    if (d.open) d.close();
    // The revocation ends this page's viewers too; their end must not
    // show a notice of its own before (or instead of) this one.
    this.host.signingOut();
    let failed = '';
    try {
      await signOut(); // forgets the credential here first, whatever the server says
    } catch (e) {
      failed = ` The server did not confirm the revocation (${e instanceof Error ? e.message : String(e)}): revoke this browser from another one, or with \`termkeep token revoke\`.`;
    }
    this.host.signedOut('Signed out', 'This browser holds no access to termkeep now. Run `termkeep url` on the machine that runs termkeep and open the address it prints to sign in again.' + failed);
  }
}
