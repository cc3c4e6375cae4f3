package remote

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
)

// The relay's contract (docs/protocol.md, "Over ssh"): on the remote
// machine, `termkeep __relay` connects to its server (starting one when
// none runs), writes one preamble line on its standard output, then
// copies bytes both ways between its standard input and output and the
// server's socket, unchanged, until either side ends. What the local side
// then speaks over ssh's pipes is what it speaks on a local server.sock:
// HTTP requests, and wire frames after an attach's upgrade.

// RelayArg is the hidden command that runs the relay; AgainFlag, its
// flag for a reconnect (no server shut down on purpose is started).
const (
	RelayArg  = "__relay"
	AgainFlag = "again"
)

// preambleTag starts the preamble: "termkeep-relay RELAY VERSION MIN\n",
// the relay's own version and the wire versions of the remote termkeep
// (the protocol it speaks, and the oldest it still speaks).
const preambleTag = "termkeep-relay"

// RelayVersion is the relay contract's version.
const RelayVersion = 1

// Versions is what a preamble says.
type Versions struct {
	Relay    int // the relay contract's
	Protocol int // the remote's wire.Version
	Min      int // the remote's wire.MinVersion
}

// Preamble is the line a relay of v writes first.
func Preamble(v Versions) string {
	return fmt.Sprintf("%s %d %d %d\n", preambleTag, v.Relay, v.Protocol, v.Min)
}

// errNoPreamble: the line is not a preamble.
var errNoPreamble = errors.New("not a termkeep relay's preamble")

// ParsePreamble reads a preamble line (without its newline).
func ParsePreamble(line string) (Versions, error) {
	f := strings.Split(line, " ")
	if len(f) != 4 || f[0] != preambleTag {
		return Versions{}, errNoPreamble
	}
	var n [3]int
	for i, s := range f[1:] {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 || v > 1<<20 || strconv.Itoa(v) != s {
			return Versions{}, errNoPreamble
		}
		n[i] = v
	}
	return Versions{Relay: n[0], Protocol: n[1], Min: n[2]}, nil
}

// maxNoise bounds what a remote may print before its preamble (a login
// script's greeting) that is skipped.
const maxNoise = 8 << 10

// readPreamble reads lines from r until a preamble, skipping up to
// maxNoise bytes of others. It reads byte by byte, so nothing after the
// preamble is taken from r.
func readPreamble(r io.Reader) (Versions, error) {
	var line []byte
	var b [1]byte
	read := 0
	for read < maxNoise {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return Versions{}, err
		}
		read++
		if b[0] != '\n' {
			line = append(line, b[0])
			continue
		}
		if v, err := ParsePreamble(strings.TrimSuffix(string(line), "\r")); err == nil {
			return v, nil
		}
		line = line[:0]
	}
	return Versions{}, errNoPreamble
}

// Compatible says whether a local termkeep of wire versions local..
// localMin and a remote of v understand each other: each speaks a version
// the other accepts, over a relay contract the local side knows.
func (v Versions) Compatible(local, localMin int) bool {
	return v.Relay == RelayVersion && v.Protocol >= localMin && local >= v.Min
}

// Relay is the remote side: it writes the preamble of v to out, then
// copies in to conn and conn to out until conn ends (the server closed
// it) or out fails. When in ends (ssh's connection is gone) it tells the
// server so, which ends conn. It returns when conn's bytes stop.
func Relay(in io.Reader, out io.Writer, conn net.Conn, v Versions) error {
	if _, err := io.WriteString(out, Preamble(v)); err != nil {
		return err
	}
	go func() {
		io.Copy(conn, in)
		if cw, ok := conn.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		} else {
			conn.Close()
		}
	}()
	_, err := io.Copy(out, conn)
	return err
}
