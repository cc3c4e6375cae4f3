package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// StandInClaude writes a program named claude that records each start's
// arguments in log and behaves as claude does with conversations: a
// conversation is recorded under the config directory once a message is
// typed, --resume of one it lacks fails with "No conversation found". It
// returns the directory that holds it, to put first on PATH.
func StandInClaude(t *testing.T, log string) string {
	t.Helper()
	dir := t.TempDir()
	script := `#!/bin/sh
echo "$*" >> '` + log + `'
mode=new id=
while [ $# -gt 0 ]; do
	case "$1" in
	--session-id) id=$2; shift ;;
	--resume) mode=resume; id=$2; shift ;;
	esac
	shift
done
store="${CLAUDE_CONFIG_DIR:-$HOME/.claude}/projects/$(pwd | tr -c 'a-zA-Z0-9\n' '-')"
if [ $mode = resume ] && [ ! -f "$store/$id.jsonl" ]; then
	echo "No conversation found with session ID: $id"
	exit 1
fi
echo "claude-standin $mode $id ready"
while read line; do
	mkdir -p "$store" && echo "$line" >> "$store/$id.jsonl"
	echo "claude-standin $id heard: $line"
done
`
	if err := os.WriteFile(filepath.Join(dir, "claude"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// StandInCodex writes a program named codex that records each start's
// arguments in log and keeps its conversation as codex does: started
// afresh, it makes a new id and holds the conversation's rollout file open
// under $CODEX_HOME (default ~/.codex)/sessions, in a child process as
// codex's native binary does under its launcher (unless
// STANDIN_NO_ROLLOUT is set: a conversation never seen); `resume ID`
// reopens that file, and fails as codex does when there is none; a line
// "/new" starts another conversation in a newer file. It returns the
// directory that holds it, to put first on PATH.
func StandInCodex(t *testing.T, log string) string {
	t.Helper()
	dir := t.TempDir()
	script := `#!/bin/sh
echo "$*" >> '` + log + `'
home="${CODEX_HOME:-$HOME/.codex}"
open() { # a new conversation's file: its id, its name
	id=$(cat /proc/sys/kernel/random/uuid)
	mkdir -p "$home/sessions/2026/11/26"
	f="$home/sessions/2026/11/26/rollout-2026-11-26T10-00-0$1-$id.jsonl"
}
if [ "$1" = resume ]; then
	id=$2
	f=$(ls "$home"/sessions/*/*/*/rollout-*-"$id".jsonl 2>/dev/null | head -n 1)
	if [ -z "$f" ]; then
		echo "No saved session found with ID $id"
		exit 1
	fi
	mode=resume
else
	open 0
	mode=new
	[ -n "$STANDIN_NO_ROLLOUT" ] && f=/dev/null
fi
(
	exec 3>>"$f"
	echo "codex-standin $mode $id ready"
	n=0
	while read line; do
		if [ "$line" = /new ] && [ "$f" != /dev/null ]; then
			n=$((n+1)); open $n; exec 4>>"$f"
			echo "codex-standin new $id ready"
			continue
		fi
		echo "$line" >> "$f"
		echo "codex-standin $id heard: $line"
	done
)
echo "codex-standin $id done"
`
	if err := os.WriteFile(filepath.Join(dir, "codex"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
