package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
)

// markers are the two lines the child prints that the bench watches for.
// Both carry a random token so no byte of the workload (or of anything a
// contender draws around it) can be mistaken for them.
type markers struct {
	token string
	ready []byte // printed by the child before it waits for the go keystroke
	end   []byte // the last line of the workload file
}

func newMarkers() markers {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	tok := hex.EncodeToString(b[:])
	return markers{
		token: tok,
		ready: []byte("__TERMKEEP_BENCH_READY_" + tok + "__"),
		end:   []byte("__TERMKEEP_BENCH_END_" + tok + "__"),
	}
}

// childScript is the session's command for every contender, so they all do
// the same work: announce readiness, wait for one line of input (the go
// keystroke, sent only once the viewer shows the announcement, so the clock
// never includes session start-up or attach), print the file, then stay alive
// so the bench can still sample the child's CPU (cutime covers the cat it
// reaped) before cleaning up.
//
// The ready marker is printed in two halves so that no echo of the command
// line itself could ever contain it.
func (m markers) childScript(file string) string {
	return fmt.Sprintf(`printf '%%s%%s\n' __TERMKEEP_BENCH_READY_ %s__; read x; cat %s; exec sleep 600`,
		m.token, shellQuote(file))
}

func shellQuote(s string) string {
	return "'" + string(bytes.ReplaceAll([]byte(s), []byte("'"), []byte(`'\''`))) + "'"
}

// writeWorkload writes about size bytes of text lines shaped like a build
// log, ending with the end marker line, and returns the exact size. Lines stay
// well under the 200-column test terminal so no contender has to wrap them.
func writeWorkload(path string, size int64, m markers) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	var n int64
	var line []byte
	last := size - int64(len(m.end)) - 1
	for i := 0; n < last; i++ {
		line = appendWorkloadLine(line[:0], i)
		line = append(line, '\n')
		if rem := last - n; int64(len(line)) > rem {
			line = append(line[:max(rem-1, 0)], '\n')
		}
		w.Write(line)
		n += int64(len(line))
	}
	w.Write(m.end)
	w.WriteByte('\n')
	n += int64(len(m.end)) + 1
	if err := w.Flush(); err != nil {
		return 0, err
	}
	return n, f.Close()
}

// appendWorkloadLine appends line i of the workload, without its newline.
func appendWorkloadLine(line []byte, i int) []byte {
	line = append(line, '[')
	line = strconv.AppendInt(line, int64(i), 10)
	line = append(line, "] "...)
	switch i % 17 {
	case 0:
		line = append(line, "warning: unused variable 'tmp"...)
		line = strconv.AppendInt(line, int64(i%977), 10)
		line = append(line, "' [-Wunused-variable]"...)
	case 5:
		line = append(line, "LINK build/bin/tool"...)
		line = strconv.AppendInt(line, int64(i%31), 10)
	default:
		line = append(line, "CC   src/pkg"...)
		line = strconv.AppendInt(line, int64(i%113), 10)
		line = append(line, "/file_"...)
		line = strconv.AppendInt(line, int64(i), 16)
		line = append(line, ".c -O2 -g -Wall -Wextra -fPIC -DNDEBUG -Iinclude -o build/obj/"...)
		line = strconv.AppendInt(line, int64(i), 16)
		line = append(line, ".o"...)
	}
	return line
}

// writeLines writes n lines: n-1 workload lines, then the end marker line.
// It returns the file's size.
func writeLines(path string, n int, m markers) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	var size int64
	var line []byte
	for i := 0; i < n-1; i++ {
		line = append(appendWorkloadLine(line[:0], i), '\n')
		w.Write(line)
		size += int64(len(line))
	}
	w.Write(m.end)
	w.WriteByte('\n')
	size += int64(len(m.end)) + 1
	if err := w.Flush(); err != nil {
		return 0, err
	}
	return size, f.Close()
}

// scanner finds a pattern in a stream that arrives in arbitrary chunks: it
// keeps the last len(pat)-1 bytes of what it has seen, so a pattern split by
// a read boundary is still found.
type scanner struct {
	pat   []byte
	carry []byte
	joint []byte
}

func newScanner(pat []byte) *scanner { return &scanner{pat: pat} }

// feed reports whether the pattern ends within what has been fed so far.
func (s *scanner) feed(p []byte) bool {
	keep := len(s.pat) - 1
	if len(s.carry) > 0 {
		s.joint = append(append(s.joint[:0], s.carry...), p[:min(len(p), keep)]...)
		if bytes.Contains(s.joint, s.pat) {
			return true
		}
	}
	if bytes.Contains(p, s.pat) {
		return true
	}
	if len(p) >= keep {
		s.carry = append(s.carry[:0], p[len(p)-keep:]...)
	} else {
		s.carry = append(s.carry, p...)
		if len(s.carry) > keep {
			s.carry = append(s.carry[:0], s.carry[len(s.carry)-keep:]...)
		}
	}
	return false
}
