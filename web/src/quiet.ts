// Whether a tab says its session went quiet, and what. A quiet badge is
// worth its room only when it tells the user something they have not seen:
// a command that finished while they were away (shell integration's marks
// say so), or output that stopped while they were away (without shell
// integration, the server's quiet_since). Never on the tab being watched,
// never before the session has printed, never while the page is still
// drawing what it was sent. A pure function (tested under node): the
// caller gathers the input.

/** What the decision reads of a session and the page. Offsets are the session's output offsets. */
export interface QuietInput {
  /** The session runs (not ended, as the page knows). */
  running: boolean;
  /** The user is looking at it: its tab is active and the page visible. */
  watched: boolean;
  /** The server's quiet_since (RFC 3339), or null while output flows. */
  quietSince: string | null;
  /** The session's end offset, as the last list said. */
  endOffset: number;
  /** What the page has received (null: nothing yet) and drawn of it. */
  written: number | null;
  drawn: number;
  /** The output offset the user had seen when they last looked (or when the page first listed the session). */
  seen: number;
  /** The shell as its marks tell (the API's shell), when the server has a view of it. */
  shell?: {
    state: string;
    last?: { has_output: boolean; output_end: number; status: number | null; command?: string } | null;
  } | null;
  /**
   * Readiness, where the server says it (the API's activity.state):
   * at_prompt, running, reading_terminal and waiting_on_events (the
   * kernel says a program waits for input), waiting (the same, guessed
   * from the screen where the kernel cannot say) or starting.
   * Undefined: not said.
   */
  readiness?: string;
}

export interface QuietNote {
  /** The badge's word: done (a command finished) or quiet. */
  text: 'done' | 'quiet';
  /** The badge's longer sentence (its tooltip). */
  title: string;
}

/** quietNote decides whether a tab wears the quiet badge, and with what; null: no badge. */
export function quietNote(i: QuietInput): QuietNote | null {
  if (!i.running || i.watched) return null;
  // Never printed, or the page has not drawn what it has: nothing to say yet.
  if (i.endOffset <= 0 || i.written === null || i.drawn < i.written) return null;
  const shell = i.shell && (i.shell.state === 'prompt' || i.shell.state === 'running') ? i.shell : null;
  if (shell) {
    if (waitsForInput(i.readiness) && i.quietSince && i.endOffset > i.seen) {
      const title =
        i.readiness === 'reading_terminal' ? 'a program is reading the terminal: it waits for input' : 'a command is waiting for input';
      return { text: 'quiet', title };
    }
    const last = shell.last;
    if (shell.state !== 'prompt' || !last?.has_output || last.output_end <= i.seen) return null;
    const what = last.command ? `“${last.command}”` : 'a command';
    const how = last.status === null ? '' : last.status === 0 ? ' (status 0)' : ` with status ${last.status}`;
    return { text: 'done', title: `${what} finished${how} while you were away` };
  }
  if (i.readiness === 'running' || i.readiness === 'starting') return null;
  if (!i.quietSince || i.endOffset <= i.seen) return null;
  return {
    text: 'quiet',
    title: `printed while you were away, quiet since ${timeOf(i.quietSince)}: done, or waiting for input`,
  };
}

/** waitsForInput: a readiness that says a program waits for input, vouched by the kernel or guessed. */
function waitsForInput(r: string | undefined): boolean {
  return r === 'reading_terminal' || r === 'waiting_on_events' || r === 'waiting';
}

function timeOf(iso: string): string {
  const d = new Date(iso);
  return Number.isFinite(d.getTime()) ? d.toISOString().slice(11, 19) + ' UTC' : 'a while';
}
