// What the page says when its access stops working: a share link's guest
// is told that the link's access ended (and why, when the server said:
// revoked or expired), the owner that this browser is signed out. A pure
// function (tested under node): no DOM, no server.

/** Who the page was signed in as, as far as it knows (GET /api/me at start). */
export interface Holder {
  /** The owner's own sign-in (the owner token's), or someone else's (a share link, a user's token). */
  owner: boolean;
}

export interface Notice {
  title: string;
  text: string;
}

const URL_HINT = 'Run `termkeep url` on the machine that runs termkeep and open the address it prints to sign in again.';

/**
 * endedNotice is the page's notice when the server refuses its credential
 * with code (the 401's "code": "revoked", "expired", or none). holder null:
 * the page never learnt who it was; it speaks as to a guest, since the
 * owner knows where the address comes from.
 */
export function endedNotice(code: string | undefined, holder: Holder | null): Notice {
  const why = code === 'revoked' || code === 'expired' ? code : '';
  if (holder?.owner) {
    const text =
      why === 'revoked'
        ? 'Its sign-in was revoked.'
        : why === 'expired'
          ? 'Its sign-in expired (14 days unused).'
          : 'Its sign-in expired (14 days unused) or was revoked.';
    return { title: 'This browser is signed out', text: `${text} ${URL_HINT}` };
  }
  return {
    title: why ? `This link's access ended (${why})` : "This link's access ended",
    text: 'The sessions it showed keep running, but this page cannot reach them any more. Ask whoever shared the link for a new one.',
  };
}
