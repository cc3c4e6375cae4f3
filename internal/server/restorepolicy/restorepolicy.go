// Package restorepolicy decides which ended sessions termkeep brings back
// by itself, and what it says of why an interrupted session ended. It is
// pure: the caller reads the registry and meta.json, and passes in what
// they say and the machine's current boot.
//
// Only a session the machine or a dead holder ended comes back: one the
// user closed, one whose process exited on its own and one whose child is
// known to have exited never do, whatever asks (the server's auto-restore
// and `termkeep restore --all` alike). An explicit `termkeep restore
// SESSION` is the user's own choice and is not judged here.
package restorepolicy

import "strconv"

// Cause is why an interrupted session ended, as far as termkeep knows.
// The values are stored in the registry and shown by the API: add new
// ones, never rename one.
type Cause string

const (
	// Unknown: a record from before causes were kept, or a machine whose
	// boot is not known.
	Unknown Cause = ""
	// MachineRestarted: the session ran in an earlier boot of the machine.
	MachineRestarted Cause = "machine_restarted"
	// HolderKilled: its holder died in this boot without recording an end
	// (an OOM kill, a SIGKILL).
	HolderKilled Cause = "holder_killed"
	// Stopped: its holder was stopped by a signal from outside termkeep
	// (the machine or the service stopping), and the machine has not been
	// seen restarting since.
	Stopped Cause = "stopped"
	// Shutdown: logind announced the machine's shutdown and the server
	// told the holder before the signals came (its meta.json's
	// shutdown_at); kept after the restart, which it says more of.
	Shutdown Cause = "shutdown"
)

// Text is the cause in words, to complete "interrupted: …" or "restored
// after …"; "" when unknown.
func (c Cause) Text() string {
	switch c {
	case MachineRestarted:
		return "the machine restarted"
	case HolderKilled:
		return "its holder was killed"
	case Stopped:
		return "its holder was stopped (the machine or the service stopping)"
	case Shutdown:
		return "the machine shut down"
	}
	return ""
}

// Known reports whether c is one of the causes above, Unknown included.
func (c Cause) Known() bool {
	switch c {
	case Unknown, MachineRestarted, HolderKilled, Stopped, Shutdown:
		return true
	}
	return false
}

// Record is what the policy needs to know of one session.
type Record struct {
	// State is the registry's: running, paused, exited, closed or
	// interrupted.
	State string
	// AutoRestore is the session's own --auto-restore, or that of its
	// workspace when the workspace is not paused.
	AutoRestore bool
	// ChildExited says the holder recorded that the child exited on its
	// own (meta.json or its status record, at the end or while it read
	// what the child left behind), whatever the registry says.
	ChildExited bool
	// BootID is the boot the session's holder started in ("" unknown).
	BootID string
	// Cause is the cause recorded when it ended ("" unknown).
	Cause Cause
}

// Mode is who asks.
type Mode int

const (
	// Auto is the server at its start: only sessions that asked for it.
	Auto Mode = iota
	// All is `termkeep restore --all`: every session the policy allows.
	All
)

// Decision is the policy's answer for one session.
type Decision struct {
	Restore bool
	// Cause is why an interrupted session ended, to show (Unknown for a
	// session that is not interrupted).
	Cause Cause
	// Why says, when Restore is false, why not.
	Why string
}

// Decide says whether mode brings back the session r in the machine's
// current boot (boot, "" when unknown), and the cause to show.
func Decide(r Record, boot string, mode Mode) Decision {
	var d Decision
	if r.State == "interrupted" {
		d.Cause = CauseOf(r.Cause, r.BootID, boot)
	}
	switch {
	case r.State != "interrupted":
		d.Why = "it is " + stateWord(r.State) + ", not interrupted"
	case r.ChildExited:
		d.Why = "its process had exited on its own"
	case mode == Auto && !r.AutoRestore:
		d.Why = "it does not ask to be restored by itself (--auto-restore)"
	default:
		d.Restore = true
	}
	return d
}

// CauseOf is the cause to show of an interrupted session whose recorded
// cause is recorded and whose holder started in sessionBoot, while the
// machine runs boot. A session of an earlier boot was ended by the
// machine's restart, unless its holder had been killed before; one of
// this boot with no cause recorded lost its holder.
func CauseOf(recorded Cause, sessionBoot, boot string) Cause {
	if !recorded.Known() {
		recorded = Unknown
	}
	known := sessionBoot != "" && boot != ""
	switch {
	case known && sessionBoot != boot && (recorded == Unknown || recorded == Stopped):
		return MachineRestarted
	case recorded != Unknown:
		return recorded
	case known:
		return HolderKilled
	}
	return Unknown
}

// earlierBoot reports whether a session whose holder started in
// sessionBoot ran in a boot before boot, the machine's current one; false
// when either is unknown.
func earlierBoot(sessionBoot, boot string) bool {
	return sessionBoot != "" && boot != "" && sessionBoot != boot
}

// InterruptedEnd is the cause and reason to record with an interrupted end
// that a session's holder reported with the cause reported and the reason
// reason, at the offset end, when the holder started in sessionBoot and
// the machine runs boot. The cause is CauseOf's; a session of an earlier
// boot that the machine's restart or shutdown ended says so as its
// reason, which replaces the holder's.
func InterruptedEnd(reported Cause, reason string, end uint64, sessionBoot, boot string) (Cause, string) {
	cause := CauseOf(reported, sessionBoot, boot)
	if r := RebootReason(cause, end); r != "" && earlierBoot(sessionBoot, boot) {
		reason = r
	}
	return cause, reason
}

// RebootReason is the reason recorded for a session of an earlier boot
// whose cause is cause and whose output ends at end; "" when the cause
// says nothing of the machine's restart.
func RebootReason(cause Cause, end uint64) string {
	switch cause {
	case MachineRestarted:
		return "the machine restarted while it ran; output up to byte " + strconv.FormatUint(end, 10) + " is kept"
	case Shutdown:
		return "the machine shut down and restarted while it ran; output up to byte " + strconv.FormatUint(end, 10) + " is kept"
	}
	return ""
}

// RestartNotice is what a starting server does about one interrupted
// session as it tells whether the machine restarted under its sessions.
type RestartNotice struct {
	// Set is the cause to record now, with RebootReason as its reason;
	// Unknown records nothing.
	Set Cause
	// Name says the session is among those the restart ended, to name in
	// the notice. With Set, the session is named too when recording Set
	// changed its record (the first server of the boot to see it).
	Name bool
}

// NoticeRestart decides, for an interrupted session whose recorded cause
// is recorded and whose holder started in sessionBoot, while the machine
// runs boot, what a starting server records and says of the machine's
// restart. endedNow says this server recorded the session's end as it
// started (it found the holder gone).
//
// A session of this boot, or of a boot not known, is none of the
// restart's doing; one whose holder was killed before the restart keeps
// that cause; one an earlier server of this boot already gave the
// restart's cause is not told again. Any other gets the restart as its
// cause, but one whose shutdown logind announced keeps Shutdown, which
// says more.
func NoticeRestart(recorded Cause, sessionBoot, boot string, endedNow bool) RestartNotice {
	if !earlierBoot(sessionBoot, boot) {
		return RestartNotice{}
	}
	switch recorded {
	case MachineRestarted:
		return RestartNotice{Name: endedNow}
	case HolderKilled:
		return RestartNotice{}
	case Shutdown:
		return RestartNotice{Set: Shutdown, Name: endedNow}
	}
	return RestartNotice{Set: MachineRestarted, Name: endedNow}
}

func stateWord(s string) string {
	if s == "" {
		return "in no known state"
	}
	return s
}
