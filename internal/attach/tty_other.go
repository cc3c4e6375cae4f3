//go:build !linux

package attach

import (
	"errors"
	"os"
)

// openRawTerm is attach's own descriptor of its terminal where the
// terminal's path can be found (Linux); elsewhere attach uses stdin and
// stdout as they are.
func openRawTerm(in, out *os.File) *rawTerm { return nil }

// TTYName is how attach is shown to the session's other viewers.
func TTYName(in *os.File) string { return in.Name() }

// rawTerm is Linux's (rawterm_linux.go); elsewhere there is none.
type rawTerm struct{ fd int }

func (t *rawTerm) Read(p []byte) (int, error)  { return 0, errors.ErrUnsupported }
func (t *rawTerm) Write(p []byte) (int, error) { return 0, errors.ErrUnsupported }
func (t *rawTerm) Close() error                { return nil }
func (t *rawTerm) pause()                      {}
func (t *rawTerm) resume()                     {}
func (t *rawTerm) done()                       {}
func (t *rawTerm) leads() bool                 { return false }

var leadsTerminal = (*rawTerm).leads
