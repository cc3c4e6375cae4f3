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
