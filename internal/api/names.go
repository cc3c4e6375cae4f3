package api

import (
	"regexp"
	"strings"
)

// NameRE is what a session id, a session name, a workspace name and a user
// name may look like.
var NameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$`)

// NameProblem explains why name may not be given to a session or a
// workspace ("" when it may): on top of the characters NameRE allows, no
// "..", so that no name ever reads as a path.
func NameProblem(name string) string {
	if !NameRE.MatchString(name) {
		return "use 1-64 letters, digits, '.', '_', '-', '@' or '+', starting with a letter or digit"
	}
	if strings.Contains(name, "..") {
		return `".." is not allowed in a name`
	}
	return ""
}
