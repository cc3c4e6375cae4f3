package security

import (
	"context"
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
	id := strings.TrimSpace(w.MustTk("new", "--name", "crowd", "--", "cat"))

	start := time.Now()
	w.MustTk("ls")
	t.Logf("termkeep ls with no viewer: %s", time.Since(start).Round(time.Millisecond))

	const viewers = 150
	for range viewers {
		v := w.DialViewer("/ws/sessions/" + id + "?mode=view")
		v.Until("a viewer's welcome", e2e.IsType(wire.TypeWelcome))
		// It keeps its connection (and the server a descriptor) for the
		// rest of the test, its frames read and dropped.
		go func() {
			for range v.Frames {
			}
		}()
	}
	e2e.WaitFor(t, 30*time.Second, "150 viewers", func() bool { return w.Session(id).Viewers == viewers })
	cliAnswers(t, w.Env, pid, id, viewers)
}

// CLI viewers (`termkeep attach`, over the server's unix socket) that
// replay a log from disk and do not read hold two descriptors each: their
// connection and the log segment their replay reads. At a file limit of
// 256 the server refuses the viewers it has no room for, with a sentence,
// and keeps enough descriptors (16) to answer ls and send at once.
func TestCLIViewersLeaveRoomForTheCLI(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	pid := e.Srv.Cmd.Process.Pid
	setLimit(t, pid, unix.RLIMIT_NOFILE, 256)
	// More than the server keeps in memory (1 MiB): replays read the disk.
	id := strings.TrimSpace(e.MustTk("new", "--name", "crowd", "--", "sh", "-c", "seq 1 300000; echo printed; exec cat"))
	e2e.WaitFor(t, 20*time.Second, "the output", func() bool {
		out, _, _ := e.Tk("capture", id)
		return strings.Contains(out, "printed")
	})
	attached, refused := 0, ""
	for range 150 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		s, err := e.C.Attach(ctx, id, wire.Hello{From: 0})
		cancel()
		if err != nil {
			refused = err.Error()
			break
		}
		t.Cleanup(func() { s.Close() })
		attached++
	}
	t.Logf("%d viewers attached, then: %s", attached, refused)
	if attached < 150 && !strings.Contains(refused, "too many open files: the server's file limit (ulimit -n) is 256") {
		t.Errorf("viewer %d was refused with %q, want a sentence naming the file limit", attached+1, refused)
	}
	cliAnswers(t, e, pid, id, attached)
}

// cliAnswers checks that ls and send answer promptly with viewers
// attached to session id of the server pid.
func cliAnswers(t *testing.T, e *e2e.Env, pid int, id string, viewers int) {
	t.Helper()
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
		_, errs, code := e.Tk(args...)
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
		out, _, _ := e.Tk("capture", "--raw", id)
		return strings.Contains(out, "still-answered")
	})
}
