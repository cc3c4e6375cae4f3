package holder

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"termkeep/internal/sessiondir"
)

// A second holder started on a session directory whose holder runs (say, a
// restore after doctor took the socket for an orphan) is refused before it
// touches anything: the log keeps one writer, and the running holder's
// socket and meta.json stay as they are.
func TestSecondHolderRefused(t *testing.T) {
	th := startHolder(t, "printf first; exec sleep 600", 0)
	th.waitEnd(5)
	meta, err := os.ReadFile(filepath.Join(th.dir, sessiondir.MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, gone := range []bool{false, true} {
		if gone {
			// Even with its socket removed, the running holder's lock holds.
			os.Remove(filepath.Join(th.dir, sessiondir.SocketFile))
		}
		h2, err := start(Spec{
			ID: "t1", Dir: th.dir, Cols: 80, Rows: 24, LogSync: "never",
			Command: []string{"sh", "-c", "printf second"},
			Env:     []string{"PATH=" + os.Getenv("PATH")},
			Cwd:     th.dir,
		}, nil)
		if err == nil {
			h2.close(0)
			t.Fatalf("socket removed %v: a second holder started on a log that has one", gone)
		}
		if !strings.Contains(err.Error(), "another holder") {
			t.Fatalf("socket removed %v: error %q does not say another holder runs", gone, err)
		}
		if !gone {
			c, err := net.Dial("unix", filepath.Join(th.dir, sessiondir.SocketFile))
			if err != nil {
				t.Fatalf("the running holder's socket no longer answers: %v", err)
			}
			c.Close()
		}
		if now, _ := os.ReadFile(filepath.Join(th.dir, sessiondir.MetaFile)); !bytes.Equal(now, meta) {
			t.Fatalf("meta.json changed:\n%s\nwant\n%s", now, meta)
		}
		if got := th.logged(0, th.h.out.End()); string(got) != "first" {
			t.Fatalf("log holds %q, want %q", got, "first")
		}
	}
}

// The lock goes with its holder: once a holder has ended, the next one (a
// restore) starts on the same directory.
func TestHolderAfterEndedHolderStarts(t *testing.T) {
	th := startHolder(t, "printf one", 0)
	<-th.done
	h2, err := start(Spec{
		ID: "t1", Dir: th.dir, Cols: 80, Rows: 24, LogSync: "never",
		Command: []string{"sh", "-c", "exec sleep 600"},
		Env:     []string{"PATH=" + os.Getenv("PATH")},
		Cwd:     th.dir,
	}, nil)
	if err != nil {
		t.Fatalf("a holder after an ended one: %v", err)
	}
	done := make(chan struct{})
	go func() { h2.serve(); close(done) }()
	h2.close(0)
	<-done
}
