package procinfo

import "bytes"

// StatField returns field n of a /proc/<pid>/stat text counted after the
// command name (0: state, 1: ppid, 2: pgrp, 3: session, 4: tty_nr), and
// the name itself, without allocating: a scan of every process on the
// machine must not leave garbage behind in the long-lived processes that
// make it. The name may hold any byte, spaces and parentheses included,
// so the fields are counted from its last ')'.
func StatField(stat []byte, n int) (comm, field []byte, ok bool) {
	i, j := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if i < 0 || j < i {
		return nil, nil, false
	}
	comm, rest := stat[i+1:j], stat[j+1:]
	for k := 0; ; k++ {
		for len(rest) > 0 && isBlank(rest[0]) {
			rest = rest[1:]
		}
		end := 0
		for end < len(rest) && !isBlank(rest[end]) {
			end++
		}
		if end == 0 {
			return nil, nil, false
		}
		if k == n {
			return comm, rest[:end], true
		}
		rest = rest[end:]
	}
}

func isBlank(c byte) bool { return c == ' ' || c == '\n' || c == '\t' }

// Int parses a decimal integer, with an optional '-', without allocating.
func Int(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}
