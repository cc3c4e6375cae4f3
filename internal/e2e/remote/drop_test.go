package remote

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"termkeep/internal/e2e"
)

// linkDrop is how long TestRemoteLinkDrops's link carries nothing.
const linkDrop = 60 * time.Second

// A proxy in front of sshd drops all traffic for a minute without a word
// (no reset) while the session prints numbered lines. Attach notices
// within seconds (its pings go unanswered) and gives the connection up;
// meanwhile it keeps one ssh trying at a time, never none and never a
// pile of them, so that once the link carries bytes again it is back
// within seconds, and the pane holds every line once, in order.
//
// (It runs for over a minute, beside the package's other tests: its file
// comes first so that it starts first.)
func TestRemoteLinkDrops(t *testing.T) {
	t.Parallel()
	s := startSSHD(t)
	proxy := startProxy(t, s)
	_, bin, p := numbersPane(t, s, proxy.via(s.SSH))
	first := sshPids(bin)
	if len(first) != 1 {
		t.Fatalf("attach runs %d ssh processes for this test, not one: %v", len(first), first)
	}
	shown := e2e.CountNumbered(p.Capture(false)).Last

	began := time.Now()
	over := proxy.Stall(linkDrop)
	var gaveUp time.Duration
	// most is the most ssh processes seen at once; none is the longest
	// time with none trying, once the first was given up.
	most, none, noneSince := 1, time.Duration(0), time.Time{}
	look := func() {
		now := sshPids(bin)
		most = max(most, len(now))
		if gaveUp == 0 && !slices.Contains(now, first[0]) {
			gaveUp = time.Since(began)
		}
		switch {
		case gaveUp == 0:
		case len(now) == 0 && noneSince.IsZero():
			noneSince = time.Now()
		case len(now) > 0 && !noneSince.IsZero():
			none = max(none, time.Since(noneSince))
			noneSince = time.Time{}
		}
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for dropping := true; dropping; {
		select {
		case <-over:
			dropping = false
		case <-tick.C:
			look()
		}
	}
	back := time.Now()
	e2e.WaitFor(t, 30*time.Second, fmt.Sprintf("lines past %d on the pane after the drop", shown), func() bool {
		look()
		return e2e.CountNumbered(p.Capture(false)).Last > shown
	})
	took := time.Since(back)
	t.Logf("attach gave the silent connection up after %s; ssh processes at once: at most %d; longest time with none: %s; back %s after the link",
		gaveUp.Round(time.Millisecond), most, none.Round(time.Millisecond), took.Round(time.Millisecond))
	// Four seconds of silence, and the ping that ends it a second late.
	if gaveUp == 0 || gaveUp > 8*time.Second {
		t.Errorf("attach gave the silent connection up after %s, not within 8 s", gaveUp.Round(time.Millisecond))
	}
	if most > 2 {
		t.Errorf("%d ssh processes at once while the link was down: a pile of them (one ending and one trying at most)", most)
	}
	// An ssh waiting on the link when it returns goes on at once.
	if none > 1500*time.Millisecond {
		t.Errorf("no ssh was trying for %s while the link was down: a return then waits for the next", none.Round(time.Millisecond))
	}
	if took > 10*time.Second {
		t.Errorf("attach was back %s after the link, not within seconds", took.Round(time.Millisecond))
	}
	allNumbers(t, p, fmt.Sprintf("link silent for %s: back %s after it", linkDrop, took.Round(time.Millisecond)))
}
