package server

import (
	"strings"
	"testing"

	"termkeep/internal/api"
	"termkeep/internal/screen"
)

func TestEncodeSend(t *testing.T) {
	less := screen.InputModes{AppCursor: true}
	shell := screen.InputModes{BracketedPaste: true}
	for _, c := range []struct {
		name string
		req  api.SendRequest
		m    screen.InputModes
		want string
		err  string
	}{
		{"keys in less", api.SendRequest{Keys: []string{"Down", "Down", "End"}}, less, "\x1bOB\x1bOB\x1bOF", ""},
		{"keys at a shell", api.SendRequest{Keys: []string{"Up"}}, screen.InputModes{}, "\x1b[A", ""},
		{"text pasted, then Enter", api.SendRequest{Text: "make\ntest", Enter: true}, shell, "\x1b[200~make\ntest\x1b[201~\r", ""},
		{"no paste asked", api.SendRequest{Text: "ls", Enter: true, NoPaste: true}, shell, "ls\r", ""},
		{"a paste end in the text", api.SendRequest{Text: "a\x1b[201~rm -rf ~\r"}, shell, "\x1b[200~arm -rf ~\r\x1b[201~", ""},
		{"no bracketed paste", api.SendRequest{Text: "ls", Keys: []string{"Tab"}}, screen.InputModes{}, "ls\t", ""},
		{"a paste loses escape sequences", api.SendRequest{Text: "a\x1b[31mb\x03c\td\n"}, screen.InputModes{}, "a[31mbc\td\n", ""},
		{"no paste asked: as given", api.SendRequest{Text: "a\x1b[201~\x03", NoPaste: true}, shell, "a\x1b[201~\x03", ""},
		{"unknown key sends nothing", api.SendRequest{Text: "x", Keys: []string{"Up", "Hyper-x"}}, less, "", "unknown key"},
		{"nothing", api.SendRequest{}, less, "", "nothing to send"},
		{"a signal alone types nothing", api.SendRequest{Signal: "KILL"}, less, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			data, sent, err := encodeSend(c.req, c.m)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || data != nil {
					t.Fatalf("got %q, %v; want error %q and nothing", data, err, c.err)
				}
				return
			}
			if err != nil || string(data) != c.want || sent.Bytes != len(c.want) {
				t.Fatalf("got %q (%+v), %v; want %q", data, sent, err, c.want)
			}
		})
	}
}

// A send's signal is one of the few a user sends a command by name, with
// or without SIG, in any case; anything else is refused before anything
// is typed.
func TestSignalNumber(t *testing.T) {
	for _, c := range []struct {
		name string
		want uint8
		bad  bool
	}{
		{"", 0, false}, {"INT", 2, false}, {"sigterm", 15, false}, {"SIGKILL", 9, false}, {"hup", 1, false}, {"QUIT", 3, false},
		{"STOP", 0, true}, {"9", 0, true}, {"SIG", 0, true}, {"KILL ", 0, true},
	} {
		got, err := signalNumber(c.name)
		if got != c.want || (err != nil) != c.bad {
			t.Errorf("signalNumber(%q) = %d, %v; want %d (refused %v)", c.name, got, err, c.want, c.bad)
		}
	}
}
