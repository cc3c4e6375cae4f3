package service

import "bytes"

// Kind is what an install is.
type Kind int

const (
	Fresh     Kind = iota // no unit yet
	Update                // something to write, reload, enable, start or restart
	Unchanged             // the service is as asked, and runs this binary
)

// Step is one thing an install does, in the order Decide lists them.
type Step int

const (
	WriteEnv Step = iota
	WriteUnit
	Reload
	Enable
	Start
	Restart
	EnableLinger
)

// Linger is whether logind keeps the user's manager after the last logout.
type Linger int

const (
	LingerUnknown Linger = iota
	LingerOn
	LingerOff
)

// Facts are what install found before it does anything.
type Facts struct {
	UnitOnDisk, UnitWant []byte // nil on disk: no file
	EnvOnDisk, EnvWant   []byte
	Manager              bool // systemctl --user reached a user manager
	Show                 Show
	SameBinary           bool // the running server's executable is the file the unit runs
	Linger               Linger
}

// Plan is what install does.
type Plan struct {
	Kind  Kind
	Steps []Step
}

// Decide says what install must do. A restart is for a server that runs
// an older binary, unit or environment than the one asked for: it stops
// the server alone (KillMode=process), so sessions keep running. When no
// user manager answers, the files are written for it to find later.
func Decide(f Facts) Plan {
	var steps []Step
	envChanged := f.EnvOnDisk == nil || !bytes.Equal(f.EnvOnDisk, f.EnvWant)
	unitChanged := f.UnitOnDisk == nil || !bytes.Equal(f.UnitOnDisk, f.UnitWant)
	if envChanged {
		steps = append(steps, WriteEnv)
	}
	if unitChanged {
		steps = append(steps, WriteUnit)
	}
	if f.Manager {
		if unitChanged || f.Show.LoadState != "loaded" {
			steps = append(steps, Reload)
		}
		if f.Show.UnitFileState != "enabled" {
			steps = append(steps, Enable)
		}
		switch {
		case !f.Show.Active():
			steps = append(steps, Start)
		case unitChanged || envChanged || !f.SameBinary || f.Show.MainPID == 0:
			steps = append(steps, Restart)
		}
	}
	if f.Linger != LingerOn {
		steps = append(steps, EnableLinger)
	}
	kind := Update
	switch {
	case f.UnitOnDisk == nil:
		kind = Fresh
	case len(steps) == 0:
		kind = Unchanged
	}
	return Plan{Kind: kind, Steps: steps}
}
