package agents

import (
	"fmt"
	"path/filepath"
	"strings"

	"termkeep/internal/procinfo"
)

// Processes is what learning a running session's conversation needs to
// know of its processes. Implementations are safe for concurrent use.
type Processes interface {
	// Descendants returns pid and every process below it.
	Descendants(pid int) ([]int, error)
	// OpenFiles returns the paths of the files pid holds open, symbolic
	// links resolved, as the kernel names them.
	OpenFiles(pid int) ([]string, error)
	// Environ returns the environment pid was started with.
	Environ(pid int) ([]string, error)
}

// System is Processes as the operating system tells them (package
// procinfo): /proc on Linux; elsewhere every call fails with
// procinfo.ErrUnsupported, and nothing is learned.
var System Processes = sysProcs{}

type sysProcs struct{}

func (sysProcs) Descendants(pid int) ([]int, error)  { return procinfo.Descendants(pid) }
func (sysProcs) OpenFiles(pid int) ([]string, error) { return procinfo.OpenFiles(pid) }
func (sysProcs) Environ(pid int) ([]string, error)   { return procinfo.Environ(pid) }

// Conversation returns the id of the conversation a running session of p
// (its child is pid) has open: the newest rollout file that one of its
// processes holds open below Rollouts in the agent's home, as the child's
// environment names it. "" and no error when none is open (yet), or p's
// ids are not learned this way; an error when the processes cannot be
// read or two conversations of the same second are open (which one is the
// session's own cannot be told: nothing is chosen).
func (p Preset) Conversation(pid int, procs Processes) (string, error) {
	if p.Rollouts == "" || p.Store == nil {
		return "", nil
	}
	pids, err := procs.Descendants(pid)
	if err != nil {
		return "", fmt.Errorf("find %s's conversation: %w", p.Name, err)
	}
	env, err := procs.Environ(pid)
	if err != nil {
		return "", fmt.Errorf("find %s's conversation: %w", p.Name, err)
	}
	home := p.home(env)
	if home == "" {
		return "", nil
	}
	// The kernel names open files by their real paths: compare with the
	// directory's (CODEX_HOME may be a symlink). None yet: nothing to find.
	dir, err := filepath.EvalSymlinks(filepath.Join(home, p.Rollouts))
	if err != nil {
		return "", nil
	}
	var found []rollout
	for _, pid := range pids {
		files, err := procs.OpenFiles(pid)
		if err != nil {
			continue // it ended meanwhile
		}
		for _, f := range files {
			if id, stamp, ok := rolloutID(dir, f); ok {
				found = append(found, rollout{id: id, stamp: stamp})
			}
		}
	}
	return newestRollout(found)
}

// Learned returns the restore command of a session of p, started with
// command and restored with restore while pinned to conv ("" = not yet),
// once its conversation is learned to be id: the agent's resume of id with
// the session's own arguments. ok is false when the session is not
// termkeep's to pin: p's ids are not learned, id is no UUID, the
// arguments choose a conversation, or restore is not what termkeep gave
// it (a --restore-command of the user's own stays theirs).
func (p Preset) Learned(command []string, restore, conv, id string) (string, bool) {
	extra, ok := p.pinsLater(command, restore, conv)
	if !ok || !isUUID(id) {
		return "", false
	}
	return p.resumeCommand(id, extra), true
}

// Learns reports whether the conversation of a session of p, started with
// command and restored with restore while pinned to conv ("" = not yet),
// is learned while it runs (Learned says when it is not).
func (p Preset) Learns(command []string, restore, conv string) bool {
	_, ok := p.pinsLater(command, restore, conv)
	return ok
}

// pinsLater is Learns, with the session's extra arguments.
func (p Preset) pinsLater(command []string, restore, conv string) (extra []string, ok bool) {
	extra, ok = p.learnable(command)
	if !ok {
		return nil, false
	}
	want := ""
	if conv != "" {
		if !validID(conv) {
			return nil, false
		}
		want = p.resumeCommand(conv, extra)
	}
	return extra, restore == want
}

// NotLearned returns the note a restore shows for a session of p, started
// with command and restored with restore, whose conversation was never
// learned: the restore starts the agent afresh. "" when the session is
// not one whose id is learned.
func (p Preset) NotLearned(command []string, restore string) string {
	if _, ok := p.learnable(command); !ok || restore != "" {
		return ""
	}
	return fmt.Sprintf("%s's conversation was never seen open while it ran, so there is none to resume; starting a new one", p.Name)
}

// learnable returns the extra arguments of a session of p started with
// command, and whether its conversation id is learned.
func (p Preset) learnable(command []string) (extra []string, ok bool) {
	if p.Rollouts == "" || len(command) < 1+len(p.Args) {
		return nil, false
	}
	extra = command[1+len(p.Args):]
	return extra, p.pinnable(extra)
}

// rollout is one open rollout file: its conversation's id and the time in
// its name.
type rollout struct{ id, stamp string }

// rolloutID returns the conversation id and time a rollout file's path
// names, when path is dir/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-UUID.jsonl
// (dir absolute and clean, as the kernel names open files); ok is false
// for any other path: elsewhere, deeper, a deleted file's name, no UUID.
func rolloutID(dir, path string) (id, stamp string, ok bool) {
	if !filepath.IsAbs(path) || filepath.Clean(path) != path {
		return "", "", false
	}
	rest, ok := strings.CutPrefix(path, dir+"/")
	if !ok {
		return "", "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 4 {
		return "", "", false
	}
	body, ok := strings.CutPrefix(parts[3], "rollout-")
	if !ok {
		return "", "", false
	}
	body, ok = strings.CutSuffix(body, ".jsonl")
	const stampLen = len("2006-01-02T15-04-05")
	if !ok || len(body) != stampLen+1+36 || body[stampLen] != '-' {
		return "", "", false
	}
	stamp, id = body[:stampLen], body[stampLen+1:]
	if !isStamp(stamp) || !isUUID(id) {
		return "", "", false
	}
	return id, stamp, true
}

// newestRollout chooses the conversation among a session's open rollouts:
// the one whose name has the latest time (a codex /new starts another
// conversation while the first may stay open). Two different ones of that
// same second are ambiguous: an error, and nothing chosen.
func newestRollout(rs []rollout) (string, error) {
	var best rollout
	for _, r := range rs {
		if r.stamp > best.stamp {
			best = r
		}
	}
	for _, r := range rs {
		if r.stamp == best.stamp && r.id != best.id {
			return "", fmt.Errorf("conversations %s and %s were both started at %s: which is the session's own cannot be told", best.id, r.id, r.stamp)
		}
	}
	return best.id, nil
}

// isStamp reports whether s has the form of a rollout's time,
// 2006-01-02T15-04-05 (the times compare as strings).
func isStamp(s string) bool {
	const form = "dddd-dd-ddTdd-dd-dd"
	if len(s) != len(form) {
		return false
	}
	for i := range len(form) {
		if form[i] == 'd' && (s[i] < '0' || s[i] > '9') || form[i] != 'd' && s[i] != form[i] {
			return false
		}
	}
	return true
}

// isUUID reports whether s is a UUID in lowercase hex, 8-4-4-4-12.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := range len(s) {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
	}
	return true
}
