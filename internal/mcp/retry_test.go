package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"termkeep/internal/client"
	"termkeep/internal/wire"
)

func TestTransient(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{client.ErrNoServer, true},
		{fmt.Errorf("connect: %w", client.ErrNoServer), true},
		{io.EOF, true},
		{fmt.Errorf("read frame: %w", io.ErrUnexpectedEOF), true},
		{&net.OpError{Op: "read", Net: "unix", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, true},
		{&net.OpError{Op: "dial", Net: "unix", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, true},
		{fmt.Errorf("the stream of session web ended: %w", errStreamEnded), true},
		{&client.Error{Status: 503, Message: "render the screen of web: the screen model is still catching up"}, true},
		{&client.Error{Status: 404, Message: "no session \"web\""}, false},
		{&client.Error{Status: 400, Message: "bad"}, false},
		{&client.Error{Status: 500, Message: "store: disk I/O error"}, false},
		{&wire.RemoteError{Code: wire.CodeUnavailable, Message: "offset 9 is beyond the session's end (3)"}, false},
		{context.DeadlineExceeded, false},
		{fmt.Errorf("wait: %w", context.Canceled), false},
		// A cancelled call whose cut connection shows as EOF too stays cancelled.
		{errors.Join(context.Canceled, io.EOF), false},
		{argErr("regex: missing )"), false},
		{errors.New("EOF"), false}, // a sentence, not the sentinel
	} {
		if got := transient(tc.err); got != tc.want {
			t.Errorf("transient(%#v) = %v; want %v", tc.err, got, tc.want)
		}
	}
}

func TestScrollbackNote(t *testing.T) {
	screen := "a\nb\nc\n" // 3 rows
	for _, tc := range []struct {
		text        string
		rows, asked int
		note        bool
	}{
		{screen, 3, 0, false},
		{screen, 3, 5, true},                   // no history at all
		{"h1\nh2\n" + screen, 3, 2, false},     // all asked for
		{"h1\nh2\n" + screen, 3, 100000, true}, // short
		{screen, 0, 100, false},                // the height is unknown
		{"a\n", 24, 100, false},                // a screen shorter than its rows: no count to trust
		{"", 3, 10, false},
	} {
		if got := scrollbackNote(tc.text, tc.rows, tc.asked); (got != "") != tc.note {
			t.Errorf("scrollbackNote(%q, %d, %d) = %q; want a note: %v", tc.text, tc.rows, tc.asked, got, tc.note)
		}
	}
}

func TestLastLines(t *testing.T) {
	for _, tc := range []struct {
		text string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc\n"},
		{"a\nb\n$ ", 2, "b\n$ "},
		{"a\nb\n$ ", 1, "$ "},
		{"a\nb\n", 5, "a\nb\n"},
		{"", 3, ""},
		{"\n\n\n", 1, "\n"},
		{"\n\n\n", 2, "\n\n"},
		{"only", 1, "only"},
	} {
		if got := tc.text[lastLines([]byte(tc.text), tc.n):]; got != tc.want {
			t.Errorf("last %d lines of %q = %q; want %q", tc.n, tc.text, got, tc.want)
		}
	}
}
