// The replay's terminal: the live terminals' look without input, and its
// fitting: the replayed screen shows whole at its own size, its text made
// smaller (never larger than the page's text size) until it fits the pane.

import { Terminal } from '@xterm/xterm';
import { Unicode11Addon } from '@xterm/addon-unicode11';
import { WebLinksAddon } from '@xterm/addon-web-links';
import { themes, ThemeName } from './theme';

const TERM_SCROLLBACK = 10000;

/** openTerm opens a read-only terminal in el with the page's text size, theme and minimum contrast. */
export function openTerm(el: HTMLElement, prefs: { fontSize: number; theme: ThemeName; minContrast: number }): Terminal {
  // The live terminals' look (session.ts), without input.
  const term = new Terminal({
    scrollback: TERM_SCROLLBACK,
    allowProposedApi: true,
    cols: 80,
    rows: 24,
    fontSize: prefs.fontSize,
    fontFamily: '"JetBrains Mono", "Cascadia Mono", "Fira Code", "SF Mono", Menlo, Consolas, "DejaVu Sans Mono", "Liberation Mono", monospace',
    lineHeight: 1.15,
    theme: themes[prefs.theme],
    minimumContrastRatio: prefs.minContrast,
    cursorBlink: false,
    cursorInactiveStyle: 'outline',
    rescaleOverlappingGlyphs: true,
    disableStdin: true,
  });
  term.loadAddon(new Unicode11Addon());
  term.unicode.activeVersion = '11';
  term.loadAddon(
    new WebLinksAddon((ev, uri) => {
      ev.preventDefault();
      window.open(uri, '_blank', 'noopener,noreferrer');
    }),
  );
  term.open(el);
  return term;
}

/**
 * fitText is the text size at which a screen drawn w×h pixels at size
 * fits avail (the pane), never above max, never below 5, in half pixels;
 * null when nothing is to change or nothing is measured yet.
 */
export function fitText(size: number, max: number, w: number, h: number, availW: number, availH: number): number | null {
  if (availW <= 0 || availH <= 0 || w <= 0 || h <= 0) return null;
  let want = Math.min(max, (size * availW) / w, (size * availH) / h);
  want = Math.max(5, Math.floor(want * 2) / 2);
  return want === size ? null : want;
}

/** Fitter keeps a terminal's screen whole in its pane. */
export class Fitter {
  private raf = 0;

  /** term: the terminal (none yet: nothing to fit); shown: whether the pane shows; max: the page's text size. */
  constructor(
    private readonly pane: HTMLElement,
    private readonly termEl: HTMLElement,
    private readonly term: () => Terminal | null,
    private readonly shown: () => boolean,
    private readonly max: () => number,
  ) {}

  /** soon fits at the next frame (once, however often it is asked). */
  soon(): void {
    if (this.raf) return;
    this.raf = requestAnimationFrame(() => {
      this.raf = 0;
      this.fit(2);
    });
  }

  private fit(tries: number): void {
    const term = this.term();
    if (!term || !this.shown()) return;
    const scr = this.termEl.querySelector('.xterm-screen') as HTMLElement | null;
    if (!scr) return;
    const size = term.options.fontSize ?? this.max();
    const want = fitText(size, this.max(), scr.offsetWidth, scr.offsetHeight, this.pane.clientWidth - 16, this.pane.clientHeight - 16);
    if (want === null) return;
    term.options.fontSize = want;
    // Cell sizes round to pixels: check again once drawn.
    if (tries > 1) requestAnimationFrame(() => this.fit(tries - 1));
  }
}
