// The settings dialog: the theme, predictive echo and the extra-keys row (a phone's bar
// has no room for their buttons), whether programs may set the clipboard
// (OSC 52), screen-reader mode, minimum contrast and
// the extra-keys row's own keys, each kept in this browser (prefs.ts) and
// applied at once. A list of keys that does not read is said, and the
// row keeps the keys it had.

import { CLIP_POLICIES, ClipPolicy } from './clipwrite';
import { $ } from './dom';
import { parseKeys } from './keys';
import { PREDICT_STYLES, PredictStyle } from './predictview';
import { CONTRASTS, Prefs } from './prefs';

/** What the dialog needs of the page. */
export interface SettingsHost {
  readonly prefs: Prefs;
  /** prefsChanged saves the preferences and applies them everywhere. */
  prefsChanged(): void;
  openAccount(): void;
}

export class Settings {
  private readonly dialog = $('settings') as HTMLDialogElement;
  private readonly theme = $('set-theme') as HTMLSelectElement;
  private readonly sr = $('set-sr') as HTMLInputElement;
  private readonly contrast = $('set-contrast') as HTMLSelectElement;
  private readonly keysRow = $('set-keys-row') as HTMLSelectElement;
  private readonly predict = $('set-predict') as HTMLSelectElement;
  private readonly predictStyle = $('set-predict-style') as HTMLSelectElement;
  private readonly clip = $('set-clip') as HTMLSelectElement;
  private readonly keys = $('set-keys') as HTMLInputElement;
  private readonly keysError = $('set-keys-error');

  constructor(private readonly host: SettingsHost) {
    for (const c of CONTRASTS) {
      const o = document.createElement('option');
      o.value = String(c);
      o.textContent = c === 1 ? 'Off: the colors programs ask for' : `${c}:1`;
      this.contrast.append(o);
    }
    this.theme.addEventListener('change', () => {
      host.prefs.theme = this.theme.value === 'light' ? 'light' : 'dark';
      host.prefsChanged();
    });
    this.sr.addEventListener('change', () => {
      host.prefs.screenReader = this.sr.checked;
      host.prefsChanged();
    });
    this.contrast.addEventListener('change', () => {
      const v = Number(this.contrast.value);
      if (CONTRASTS.includes(v)) host.prefs.minContrast = v;
      host.prefsChanged();
    });
    this.keysRow.addEventListener('change', () => {
      const v = this.keysRow.value;
      if (v === 'auto' || v === 'on' || v === 'off') host.prefs.keys = v;
      host.prefsChanged();
    });
    this.predict.addEventListener('change', () => {
      const v = this.predict.value;
      if (v === 'auto' || v === 'always' || v === 'off') host.prefs.predict = v;
      host.prefsChanged();
    });
    this.predictStyle.addEventListener('change', () => {
      const v = this.predictStyle.value as PredictStyle;
      if (PREDICT_STYLES.includes(v)) host.prefs.predictStyle = v;
      host.prefsChanged();
    });
    this.clip.addEventListener('change', () => {
      const v = this.clip.value as ClipPolicy;
      if (CLIP_POLICIES.includes(v)) host.prefs.clipboardWrites = v;
      host.prefsChanged();
    });
    this.keys.addEventListener('input', () => this.readKeys());
    $('set-account').addEventListener('click', () => {
      this.dialog.close();
      host.openAccount();
    });
  }

  open(): void {
    const p = this.host.prefs;
    this.theme.value = p.theme;
    this.sr.checked = p.screenReader;
    this.contrast.value = String(p.minContrast);
    this.keysRow.value = p.keys;
    this.predict.value = p.predict;
    this.predictStyle.value = p.predictStyle;
    this.clip.value = p.clipboardWrites;
    this.keys.value = p.extraKeys.join(' ');
    this.showError([]);
    this.dialog.showModal();
  }

  private readKeys(): void {
    const { keys, bad } = parseKeys(this.keys.value);
    this.showError(bad);
    if (bad.length) return;
    this.host.prefs.extraKeys = keys;
    this.host.prefsChanged();
  }

  private showError(bad: string[]): void {
    this.keysError.textContent = bad.length ? `Not a key: ${bad.join(', ')}. The row keeps its keys until the list reads.` : '';
    this.keys.setAttribute('aria-invalid', String(bad.length > 0));
  }
}
