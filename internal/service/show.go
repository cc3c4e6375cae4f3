package service

import (
	"strconv"
	"strings"
)

// Show is the unit as `systemctl --user show` tells it.
type Show struct {
	LoadState, ActiveState, SubState, UnitFileState string
	MainPID                                         int
	FragmentPath                                    string
	Since                                           string // ExecMainStartTimestamp
}

// ShowProps are the properties ParseShow reads, for `systemctl show -p`.
const ShowProps = "LoadState,ActiveState,SubState,UnitFileState,MainPID,FragmentPath,ExecMainStartTimestamp"

// Active says the server runs, or is on its way up or down.
func (s Show) Active() bool {
	switch s.ActiveState {
	case "active", "activating", "reloading":
		return true
	}
	return false
}

// ParseShow reads `systemctl show`'s KEY=VALUE lines. Lines it does not
// know are skipped; a pid that is not a positive number is 0.
func ParseShow(b []byte) Show {
	var s Show
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimRight(line, "\r"), "=")
		if !ok {
			continue
		}
		switch k {
		case "LoadState":
			s.LoadState = v
		case "ActiveState":
			s.ActiveState = v
		case "SubState":
			s.SubState = v
		case "UnitFileState":
			s.UnitFileState = v
		case "MainPID":
			s.MainPID = pid(v)
		case "FragmentPath":
			s.FragmentPath = v
		case "ExecMainStartTimestamp":
			s.Since = v
		}
	}
	return s
}

func pid(v string) int {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// Launchd is the agent as `launchctl print` tells it.
type Launchd struct {
	Loaded        bool // launchctl knows the agent
	State         string
	PID           int
	Program, Path string
}

// ParseLaunchctlPrint reads the first level of `launchctl print
// gui/UID/LABEL`: "key = value" lines inside the service's braces, not
// those of nested blocks. Its format is meant for people and changes
// between releases, so what it lacks is left empty.
func ParseLaunchctlPrint(b []byte) Launchd {
	var l Launchd
	depth := 0
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasSuffix(line, "{"):
			if depth == 0 {
				l.Loaded = true
			}
			depth++
			continue
		case line == "}":
			depth = max(depth-1, 0)
			continue
		}
		if depth != 1 {
			continue
		}
		k, v, ok := strings.Cut(line, " = ")
		if !ok {
			continue
		}
		switch k {
		case "state":
			l.State = v
		case "pid":
			l.PID = pid(v)
		case "program":
			l.Program = v
		case "path":
			l.Path = v
		}
	}
	return l
}
