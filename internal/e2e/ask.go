package e2e

import (
	"bytes"
	"os"
	"strconv"
	"time"

	"golang.org/x/term"
)

// askChild is the child program TK_CHILD=ask: with its tty raw, it puts
// the cursor at row 5, column 10, asks the terminal for its background
// colour and the cursor position, and collects what its input receives
// until both answers came (60 s at most) and for 2 s more, to catch a
// second answer. It prints ANSWERS<quoted bytes>DONE and exits with the
// tty restored, so that whatever arrives later reaches the shell.
func askChild() int {
	old, err := term.MakeRaw(0)
	if err != nil {
		return 3
	}
	defer term.Restore(0, old)
	in := readStdin()
	os.Stdout.WriteString("\x1b[H\x1b[2J\x1b[5;10H\x1b]11;?\x07\x1b[6n")
	var got []byte
	complete := func() bool {
		return bytes.IndexByte(got, 'R') >= 0 && (bytes.IndexByte(got, 0x07) >= 0 || bytes.Contains(got, []byte("\x1b\\")))
	}
	deadline := time.After(60 * time.Second)
	var settle <-chan time.Time
	for done := false; !done; {
		select {
		case b := <-in:
			got = append(got, b...)
		case <-deadline:
			done = true
		case <-settle:
			done = true
		}
		if settle == nil && complete() {
			settle = time.After(2 * time.Second)
		}
	}
	os.Stdout.WriteString("\r\nANSWERS<" + strconv.Quote(string(got)) + ">DONE\r\n")
	return 0
}
