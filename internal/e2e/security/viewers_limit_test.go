package security

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"termkeep/internal/e2e"
	"termkeep/internal/wire"
)

// A server whose file limit (RLIMIT_NOFILE) is 256, with 150 browser
// viewers attached to one session: the CLI still gets answers at once,
// because browsers never take the descriptors the server keeps for it.
func TestViewersLeaveRoomForTheCLI(t *testing.T) {
	w := e2e.NewWebEnv(t)
	pid := w.Srv.Cmd.Process.Pid
	setLimit(t, pid, unix.RLIMIT_NOFILE, 256)
	// More output than a quiet session keeps in memory (64 KiB, 5 s after
	// its last output): a viewer that starts from 0 reads the log on disk.
	id := strings.TrimSpace(w.MustTk("new", "--name", "crowd", "--", "sh", "-c", "seq 1 40000; echo printed; exec cat"))
	e2e.WaitFor(t, 20*time.Second, "the output", func() bool {
		out, _, _ := w.Tk("capture", id)
		return strings.Contains(out, "printed")
	})
	time.Sleep(6 * time.Second)

	start := time.Now()
	w.MustTk("ls")
	t.Logf("termkeep ls with no viewer: %s", time.Since(start).Round(time.Millisecond))

	const viewers = 150
	for range viewers {
		v := w.DialViewer("/ws/sessions/" + id + "?mode=view&from=0")
		v.C.SetReadLimit(2*wire.MaxPayload + 2*wire.HeaderSize)
		v.Until("a viewer's welcome", e2e.IsType(wire.TypeWelcome))
		// Its frames are not read from here on: it keeps its connection
		// (and the server its descriptor) for the rest of the test.
		go func() {
			for range v.Frames {
			}
		}()
	}
	e2e.WaitFor(t, 30*time.Second, "150 viewers", func() bool { return w.Session(id).Viewers == viewers })
	fds, _ := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
	segs := 0
	for _, fd := range fds {
		if target, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "fd", fd.Name())); strings.HasSuffix(target, ".seg") {
			segs++
		}
	}
	t.Logf("the server has %d descriptors open (%d of them log segments) with %d viewers (limit 256)", len(fds), segs, viewers)

	for _, args := range [][]string{{"ls"}, {"send", id, "still-answered"}, {"ls"}} {
		start := time.Now()
		_, errs, code := w.Tk(args...)
		took := time.Since(start)
		t.Logf("termkeep %s: %s", strings.Join(args, " "), took.Round(time.Millisecond))
		if code != 0 {
			t.Fatalf("termkeep %s: exit %d: %s", strings.Join(args, " "), code, errs)
		}
		if took > 10*time.Second {
			t.Errorf("termkeep %s took %s with %d viewers attached", strings.Join(args, " "), took, viewers)
		}
	}
	e2e.WaitFor(t, 20*time.Second, "the input echoed", func() bool {
		out, _, _ := w.Tk("capture", "--raw", id)
		return strings.Contains(out, "still-answered")
	})
}

