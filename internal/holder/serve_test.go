package holder

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/sessiondir"
	"termkeep/internal/wire"
)

// A server that sends what a holder cannot take gets an Error frame and
// the connection is closed; a cut connection is just closed. The session
// is untouched: the child runs on, the log has no byte more, and the next
// server is served as if nothing had happened.
func TestServeMalformed(t *testing.T) {
	hello := frame(wire.TypeHello, []byte(fmt.Sprintf(`{"version":%d,"role":"server","from":-1}`, wire.Version)))
	for _, tc := range []struct {
		name  string
		hello bool   // send a good hello first
		send  []byte // then this
		code  uint16 // 0: no error frame, just the end
		msg   string
	}{
		{"input before hello", false, frame(wire.TypeInput, []byte("rm -rf ~\n")), wire.CodeMalformed, "expected a hello"},
		{"hello not JSON", false, frame(wire.TypeHello, []byte("{version")), wire.CodeMalformed, ""},
		{"hello with unknown fields' types", false, frame(wire.TypeHello, []byte(`{"version":"2"}`)), wire.CodeMalformed, ""},
		{"hello version 0", false, frame(wire.TypeHello, []byte(`{"version":0,"from":0}`)), wire.CodeVersion, "too old"},
		{"hello version negative", false, frame(wire.TypeHello, []byte(`{"version":-7,"from":0}`)), wire.CodeVersion, "too old"},
		{"unknown type first", false, frame(0x3f, nil), wire.CodeMalformed, "expected a hello"},
		{"hello cut short", false, hello[:len(hello)-3], wire.CodeMalformed, "expected a hello"},
		{"unknown type", true, frame(0x3f, nil), wire.CodeMalformed, "unknown frame type"},
		{"length past the maximum", true, []byte{byte(wire.TypeInput), 0xff, 0xff, 0xff, 0xff}, wire.CodeMalformed, "larger than"},
		{"resize of 3 bytes", true, frame(wire.TypeResize, []byte{0, 80, 0}), wire.CodeMalformed, "resize"},
		{"resize to 0x0", true, frame(wire.TypeResize, []byte{0, 0, 0, 0}), wire.CodeMalformed, ""},
		{"resize past the maximum", true, frame(wire.TypeResize, []byte{0xff, 0xff, 0xff, 0xff}), wire.CodeMalformed, ""},
		{"signal 0", true, frame(wire.TypeSignal, []byte{0}), wire.CodeMalformed, "signal"},
		{"signal 64", true, frame(wire.TypeSignal, []byte{64}), wire.CodeMalformed, "signal"},
		{"close of 2 bytes", true, frame(wire.TypeClose, []byte{1, 2}), wire.CodeMalformed, "close"},
		{"cwd not UTF-8", true, frame(wire.TypeCwd, []byte{0xff, 0xfe}), wire.CodeMalformed, "UTF-8"},
		{"name too long", true, frame(wire.TypeName, bytes.Repeat([]byte("n"), 257)), wire.CodeMalformed, "name"},
		{"a second hello", true, hello, wire.CodeMalformed, "hello"},
		{"output toward the pty", true, frame(wire.TypeOutput, make([]byte, 9)), wire.CodeMalformed, "output"},
		{"an exit frame", true, frame(wire.TypeExit, []byte(`{"state":"exited"}`)), wire.CodeMalformed, "exit"},
		{"cut mid-frame", true, frame(wire.TypeInput, []byte("echo"))[:7], 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			th := startHolder(t, echoLines, 0)
			th.waitEnd(5)
			s := th.dial()
			if tc.hello {
				s.c.Write(hello)
				if f := s.next(); f.Type != wire.TypeWelcome {
					t.Fatalf("got %s, want a welcome", f.Type)
				}
			}
			s.c.Write(tc.send)
			s.c.CloseWrite() // a cut frame is cut
			code, msg := s.expectError(tc.code != 0)
			if code != tc.code || !strings.Contains(msg, tc.msg) {
				t.Fatalf("error %d %q, want %d containing %q", code, msg, tc.code, tc.msg)
			}

			// Untouched: nothing reached the pty or meta.json, and the
			// next server is served.
			if end := th.h.out.End(); end != 5 {
				t.Fatalf("the log grew to %d", end)
			}
			if m, err := sessiondir.ReadMeta(th.dir); err != nil || m.Cols != 80 || m.Rows != 24 || m.Cwd != th.dir || m.EndedAt != nil {
				t.Fatalf("meta.json %+v, %v: changed", m, err)
			}
			th.untouched("ok")
		})
	}
}

// Input, resize, signal and the meta.json frames act in the order the
// server sent them, all sent at once: the lines reach the child in order,
// each Resized frame comes back in order at an offset no earlier than the
// last, a signal sent before a line is handled before it, a ping is
// answered, and the pty and meta.json end with the last size.
func TestServeFramesInOrder(t *testing.T) {
	th := startHolder(t, `trap 'printf "<USR1>"' USR1; printf ready; while read -r l; do printf "<%s>" "$l"; done`, 0)
	th.waitEnd(5)
	s, _ := th.connect(0)
	var sent bytes.Buffer
	w := wire.NewWriter(&sent)
	var want strings.Builder
	want.WriteString("ready")
	var wantResized []string
	for i := 1; i <= 100; i++ {
		w.Input([]byte(fmt.Sprintf("%d\n", i)))
		fmt.Fprintf(&want, "<%d>", i)
		if i%10 == 0 {
			cols, rows := uint16(80+i/10), uint16(24+i/5)
			w.Resize(cols, rows)
			wantResized = append(wantResized, fmt.Sprintf("%dx%d", cols, rows))
		}
	}
	w.Signal(uint8(syscall.SIGUSR1))
	w.Input([]byte("last\n"))
	w.Uint64(wire.TypePing, 7)
	w.Frame(wire.TypeCwd, []byte("/srv/x"))
	w.Frame(wire.TypeName, []byte("build"))
	if _, err := s.c.Write(sent.Bytes()); err != nil {
		t.Fatal(err)
	}

	var out []byte
	var resized []string
	lastAt := uint64(0)
	pong := false
	deadline := time.Now().Add(wait)
	for !bytes.HasSuffix(out, []byte("<last>")) || !pong || len(resized) < len(wantResized) {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: output %q, resized %v, pong %v", wait, out, resized, pong)
		}
		f := s.next()
		switch f.Type {
		case wire.TypeOutput:
			_, data, _ := wire.ParseOutput(f.Payload)
			out = append(out, data...)
		case wire.TypeResized:
			off, cols, rows, _ := wire.ParseResized(f.Payload)
			if off < lastAt {
				t.Fatalf("resized at %d after one at %d", off, lastAt)
			}
			lastAt = off
			resized = append(resized, fmt.Sprintf("%dx%d", cols, rows))
		case wire.TypePong:
			v, _ := wire.ParseUint64(f.Type, f.Payload)
			pong = v == 7
		}
	}
	// The trap runs when bash next looks, which may be lines before the
	// one it was reading when the signal came, but never after a line
	// written after the signal.
	got := string(out)
	if strings.Count(got, "<USR1>") != 1 || strings.Index(got, "<USR1>") > strings.Index(got, "<last>") {
		t.Fatalf("the signal was not handled once, before the line sent after it:\n%s", got)
	}
	if got, want := strings.Replace(got, "<USR1>", "", 1), want.String()+"<last>"; got != want {
		t.Fatalf("the child got\n%s\nwant\n%s", got, want)
	}
	if fmt.Sprint(resized) != fmt.Sprint(wantResized) {
		t.Fatalf("resized %v, want %v", resized, wantResized)
	}
	if ws, err := getWinsize(th.h.ptmx); err != nil || ws.Col != 90 || ws.Row != 44 {
		t.Fatalf("the pty is %dx%d (%v), want 90x44", ws.Col, ws.Row, err)
	}
	// meta.json is written off the connection's goroutine: poll.
	for {
		m, err := sessiondir.ReadMeta(th.dir)
		if err == nil && m.Cols == 90 && m.Rows == 44 && m.Cwd == "/srv/x" && m.Name == "build" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("meta.json %+v, %v; want 90x44, cwd /srv/x, name build", m, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A process of another user that reaches holder.sock (its directory and
// mode opened here, so the uid check alone decides) is closed on at once:
// no welcome, and nothing it sends reaches the child. Root only: the
// client runs as nobody.
func TestServeOtherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root, to run a client as another user")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody")
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	gid, _ := strconv.Atoi(nobody.Gid)
	th := startHolder(t, echoLines, 0)
	th.waitEnd(5)
	sock := filepath.Join(th.dir, sessiondir.SocketFile)
	os.Chmod(th.dir, 0o711)
	os.Chmod(sock, 0o666)
	// This test binary, where nobody can run it.
	bin, err := os.MkdirTemp("", "tkh-bin")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(bin)
	os.Chmod(bin, 0o755)
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	self := filepath.Join(bin, "holder.test")
	if err := os.WriteFile(self, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^TestServeOtherUserClient$")
	cmd.Env = []string{"HOLDER_TEST_SOCK=" + sock}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "refused: ") || strings.Contains(string(out), "welcome") {
		t.Fatalf("nobody's client: %v\n%s", err, out)
	}
	// The owner is served, and the child got nothing from nobody.
	th.untouched("owner")
}

// TestServeOtherUserClient is TestServeOtherUser's client, run as nobody.
func TestServeOtherUserClient(t *testing.T) {
	sock := os.Getenv("HOLDER_TEST_SOCK")
	if sock == "" {
		t.Skip("run by TestServeOtherUser")
	}
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatalf("dial: %v", err) // the mode is open: the holder must refuse, not the file system
	}
	defer c.Close()
	w := wire.NewWriter(c)
	w.JSON(wire.TypeHello, wire.Hello{Version: wire.Version, Role: "server", From: 0})
	w.Input([]byte("from nobody\n"))
	c.SetReadDeadline(time.Now().Add(wait))
	var buf []byte
	f, err := wire.ReadFrame(c, &buf)
	if err == nil {
		fmt.Printf("got a %s frame\n", f.Type)
		return
	}
	fmt.Printf("refused: %v\n", err)
}

// A connection that never says hello holds nothing up: the next server is
// served while it sits there, and the session is untouched.
func TestServeSilentPeer(t *testing.T) {
	th := startHolder(t, echoLines, 0)
	th.waitEnd(5)
	silent := th.dial()
	silent.c.Write([]byte{byte(wire.TypeHello), 0, 0}) // and not a byte more
	th.untouched("next")
}
