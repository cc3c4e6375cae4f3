package sessiondir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"termkeep/internal/outlog"
)

// Salvage makes the Meta of the session in dir when its meta.json cannot
// be read (damaged, or missing), so that the session and its log stay
// reachable: the directory's name is the id; the keys of meta.json that
// decode whole before the damage are kept; the status record of the same
// run (or, when those keys do not say which run, the record alone) gives
// the holder's pid, the start and how and when the session ended; the log
// gives the size and the end. Whether the holder still runs is for the
// caller to find (HolderRuns, its socket).
//
// It returns what it could not recover, as meta.json's keys: "command"
// and "cwd" when they are not among the keys kept, and "name",
// "workspace" and "settings" when meta.json was cut before them (a
// session may have had none). It fails when dir holds neither a status
// record nor a log: that is not a session's directory.
func Salvage(dir string) (Meta, []string, error) {
	id := filepath.Base(dir)
	m, seen, whole := salvageJSON(dir)
	m.ID = id
	st, serr := ReadStatus(dir)
	l, lerr := outlog.Open(filepath.Join(dir, LogDir), outlog.Options{ReadOnly: true})
	if serr != nil && lerr != nil {
		return Meta{}, nil, fmt.Errorf("sessiondir: %s has neither a status record (%v) nor a log (%v)", dir, serr, lerr)
	}
	if serr == nil {
		if !seen["holder_pid"] || !seen["started_at"] {
			m.HolderPid, m.StartedAt = st.HolderPid, st.StartedAt
		}
		st.complete(&m)
	}
	if lerr == nil {
		m.End = max(m.End, l.End())
		if m.Cols == 0 || m.Rows == 0 {
			m.Cols, m.Rows = l.Size()
		}
		if m.StartedAt.IsZero() {
			m.StartedAt = logStart(l)
		}
		l.Close()
	}
	if m.StartedAt.IsZero() {
		if fi, err := os.Stat(dir); err == nil {
			m.StartedAt = fi.ModTime()
		}
	}
	var unknown []string
	for _, k := range []string{"command", "cwd"} {
		if !seen[k] {
			unknown = append(unknown, k)
		}
	}
	if !whole {
		for _, k := range []string{"name", "workspace"} {
			if !seen[k] {
				unknown = append(unknown, k)
			}
		}
		if !seen["auto_restore"] && !seen["restore_command"] && !seen["size_policy"] && !seen["no_shell_integration"] {
			unknown = append(unknown, "settings")
		}
	}
	return m, unknown, nil
}

// salvageJSON decodes the keys of dir's meta.json that come whole before
// its damage, each on its own (a value of the wrong type costs only its
// key). It reports which keys it kept, and whether it read the object to
// its end.
func salvageJSON(dir string) (Meta, map[string]bool, bool) {
	var m Meta
	seen := map[string]bool{}
	b, err := os.ReadFile(filepath.Join(dir, MetaFile))
	if err != nil {
		return m, seen, false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return m, seen, false
	}
	whole := false
	for {
		if !dec.More() {
			_, err := dec.Token()
			whole = err == nil
			break
		}
		t, err := dec.Token()
		k, ok := t.(string)
		if err != nil || !ok {
			break
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			break
		}
		one, _ := json.Marshal(map[string]json.RawMessage{k: v})
		var f Meta
		if json.Unmarshal(one, &f) != nil {
			continue
		}
		json.Unmarshal(one, &m)
		seen[keyOf(k)] = true
	}
	return m, seen, whole
}

// salvageKeys are the keys of meta.json Salvage asks about.
var salvageKeys = []string{"command", "cwd", "name", "workspace", "holder_pid", "started_at",
	"auto_restore", "restore_command", "size_policy", "no_shell_integration"}

// keyOf is the key of salvageKeys that k stands for as encoding/json
// matches keys (case folded), or k.
func keyOf(k string) string {
	for _, s := range salvageKeys {
		if strings.EqualFold(k, s) {
			return s
		}
	}
	return k
}

// logStart is when the log's oldest retained byte was logged, or the
// zero time.
func logStart(l *outlog.Log) (t time.Time) {
	l.Chunks(l.First(), l.First(), func(c outlog.Chunk) error {
		if t.IsZero() {
			t = c.Time
		}
		return nil
	})
	return t
}

// ReadMetaOrSalvage is ReadMeta, or when meta.json cannot be read, what
// Salvage makes of dir: for deciding how a session stands (its end, its
// holder), which must not fail for want of meta.json.
func ReadMetaOrSalvage(dir string) (Meta, error) {
	m, err := ReadMeta(dir)
	if err == nil {
		return m, nil
	}
	if sm, _, serr := Salvage(dir); serr == nil {
		return sm, nil
	}
	return m, err
}

// SalvagedReason says in words that a session was recovered by Salvage
// and what of it is unknown.
func SalvagedReason(unknown []string) string {
	r := "its meta.json could not be read; recovered from its directory, status record and log"
	if len(unknown) > 0 {
		r += "; unknown: " + strings.Join(unknown, ", ")
	}
	return r
}
