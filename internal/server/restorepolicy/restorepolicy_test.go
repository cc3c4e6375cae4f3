package restorepolicy

import (
	"strings"
	"testing"
)

func TestDecide(t *testing.T) {
	const boot, old = "boot-2", "boot-1"
	for _, tc := range []struct {
		name    string
		r       Record
		mode    Mode
		restore bool
		cause   Cause
		why     string // part of Why when not restored
	}{
		// The machine restarted under it.
		{"reboot, auto", Record{State: "interrupted", AutoRestore: true, BootID: old}, Auto, true, MachineRestarted, ""},
		{"reboot, --all", Record{State: "interrupted", BootID: old}, All, true, MachineRestarted, ""},
		{"reboot, not asked", Record{State: "interrupted", BootID: old}, Auto, false, MachineRestarted, "--auto-restore"},
		{"stopped by SIGTERM, then reboot", Record{State: "interrupted", AutoRestore: true, BootID: old, Cause: Stopped}, Auto, true, MachineRestarted, ""},
		{"restarted, as recorded", Record{State: "interrupted", AutoRestore: true, BootID: old, Cause: MachineRestarted}, Auto, true, MachineRestarted, ""},
		// Its holder died in this boot (an OOM kill).
		{"holder killed, auto", Record{State: "interrupted", AutoRestore: true, BootID: boot}, Auto, true, HolderKilled, ""},
		{"holder killed, --all", Record{State: "interrupted", BootID: boot}, All, true, HolderKilled, ""},
		{"holder killed, then reboot", Record{State: "interrupted", AutoRestore: true, BootID: old, Cause: HolderKilled}, Auto, true, HolderKilled, ""},
		{"service stopped, same boot", Record{State: "interrupted", AutoRestore: true, BootID: boot, Cause: Stopped}, Auto, true, Stopped, ""},
		// logind announced the shutdown: said so, before the reboot and after.
		{"shutdown, then reboot, auto", Record{State: "interrupted", AutoRestore: true, BootID: old, Cause: Shutdown}, Auto, true, Shutdown, ""},
		{"shutdown, then reboot, --all", Record{State: "interrupted", BootID: old, Cause: Shutdown}, All, true, Shutdown, ""},
		{"shutdown, not asked", Record{State: "interrupted", BootID: old, Cause: Shutdown}, Auto, false, Shutdown, "--auto-restore"},
		{"shutdown, same boot (cancelled too late)", Record{State: "interrupted", BootID: boot, Cause: Shutdown}, All, true, Shutdown, ""},
		{"shutdown, but its child exited", Record{State: "interrupted", AutoRestore: true, ChildExited: true, BootID: old, Cause: Shutdown}, All, false, Shutdown, "exited on its own"},
		{"shutdown, but closed", Record{State: "closed", AutoRestore: true, BootID: old, Cause: Shutdown}, All, false, Unknown, "closed"},
		// Ended by the user or by itself: never.
		{"closed", Record{State: "closed", AutoRestore: true, BootID: old}, Auto, false, Unknown, "closed"},
		{"closed, --all", Record{State: "closed", BootID: old}, All, false, Unknown, "closed"},
		{"exited", Record{State: "exited", AutoRestore: true, BootID: old}, Auto, false, Unknown, "exited"},
		{"exited, --all", Record{State: "exited", BootID: boot}, All, false, Unknown, "exited"},
		{"interrupted but its child exited", Record{State: "interrupted", AutoRestore: true, ChildExited: true, BootID: old}, Auto, false, MachineRestarted, "exited on its own"},
		{"interrupted but its child exited, --all", Record{State: "interrupted", ChildExited: true, BootID: boot}, All, false, HolderKilled, "exited on its own"},
		// Not ended at all.
		{"running", Record{State: "running", AutoRestore: true, BootID: old}, Auto, false, Unknown, "running"},
		{"paused", Record{State: "paused", AutoRestore: true}, All, false, Unknown, "paused"},
		// Hostile and unknown records.
		{"no state", Record{AutoRestore: true}, All, false, Unknown, "no known state"},
		{"a state from the future", Record{State: "hibernating", AutoRestore: true}, All, false, Unknown, "hibernating"},
		{"a cause from the future", Record{State: "interrupted", AutoRestore: true, BootID: boot, Cause: "eaten_by_grue"}, Auto, true, HolderKilled, ""},
		{"no boot recorded", Record{State: "interrupted", AutoRestore: true}, Auto, true, Unknown, ""},
		{"no boot recorded, a cause", Record{State: "interrupted", AutoRestore: true, Cause: Stopped}, Auto, true, Stopped, ""},
		{"no boot recorded, shutdown", Record{State: "interrupted", AutoRestore: true, Cause: Shutdown}, Auto, true, Shutdown, ""},
		{"the case of the state", Record{State: "Interrupted", AutoRestore: true, BootID: old}, Auto, false, Unknown, "Interrupted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.r, boot, tc.mode)
			if d.Restore != tc.restore || d.Cause != tc.cause {
				t.Fatalf("Decide(%+v, %q, %v) = %+v; want restore %v, cause %q", tc.r, boot, tc.mode, d, tc.restore, tc.cause)
			}
			if d.Restore != (d.Why == "") || (tc.why != "" && !strings.Contains(d.Why, tc.why)) {
				t.Fatalf("Decide(%+v) says why %q; want it to say %q", tc.r, d.Why, tc.why)
			}
		})
	}
}

// --all restores at least what Auto does, and Auto only what asked for it.
func TestAllCoversAuto(t *testing.T) {
	for _, state := range []string{"", "running", "paused", "exited", "closed", "interrupted"} {
		for _, auto := range []bool{false, true} {
			for _, exited := range []bool{false, true} {
				for _, sb := range []string{"", "b1", "b2"} {
					for _, cause := range []Cause{Unknown, MachineRestarted, HolderKilled, Stopped, Shutdown} {
						for _, boot := range []string{"", "b1"} {
							r := Record{State: state, AutoRestore: auto, ChildExited: exited, BootID: sb, Cause: cause}
							a, all := Decide(r, boot, Auto), Decide(r, boot, All)
							if a.Restore && !all.Restore || a.Restore && !auto || a.Cause != all.Cause {
								t.Fatalf("%+v in %q: auto %+v, all %+v", r, boot, a, all)
							}
							if all.Restore && (state != "interrupted" || exited) {
								t.Fatalf("%+v in %q: restored by --all", r, boot)
							}
						}
					}
				}
			}
		}
	}
}

func TestCauseOf(t *testing.T) {
	for _, tc := range []struct {
		recorded          Cause
		sessionBoot, boot string
		want              Cause
	}{
		{Unknown, "a", "b", MachineRestarted},
		{Stopped, "a", "b", MachineRestarted},
		{MachineRestarted, "a", "a", MachineRestarted}, // recorded by an earlier server of this boot
		{HolderKilled, "a", "b", HolderKilled},
		{Unknown, "a", "a", HolderKilled},
		{Stopped, "a", "a", Stopped},
		{Unknown, "", "a", Unknown},
		{Unknown, "a", "", Unknown},
		{Unknown, "", "", Unknown},
		{HolderKilled, "", "", HolderKilled},
		{Shutdown, "a", "b", Shutdown}, // announced: more than a restart says
		{Shutdown, "a", "a", Shutdown},
		{Shutdown, "", "", Shutdown},
		{"garbage", "a", "a", HolderKilled},
		{"garbage", "", "", Unknown},
	} {
		if got := CauseOf(tc.recorded, tc.sessionBoot, tc.boot); got != tc.want {
			t.Errorf("CauseOf(%q, %q, %q) = %q, want %q", tc.recorded, tc.sessionBoot, tc.boot, got, tc.want)
		}
	}
	for _, c := range []Cause{MachineRestarted, HolderKilled, Stopped, Shutdown} {
		if c.Text() == "" || !c.Known() {
			t.Errorf("%q has no words", c)
		}
	}
	if Unknown.Text() != "" || Cause("x").Known() {
		t.Error("an unknown cause has words")
	}
}

func TestInterruptedEnd(t *testing.T) {
	const said = "the holder's own words"
	restarted := "the machine restarted while it ran; output up to byte 42 is kept"
	shutdown := "the machine shut down and restarted while it ran; output up to byte 42 is kept"
	for _, tc := range []struct {
		name              string
		reported          Cause
		sessionBoot, boot string
		cause             Cause
		reason            string
	}{
		{"an earlier boot, no cause", Unknown, "a", "b", MachineRestarted, restarted},
		{"an earlier boot, stopped by SIGTERM", Stopped, "a", "b", MachineRestarted, restarted},
		{"an earlier boot, logind's shutdown", Shutdown, "a", "b", Shutdown, shutdown},
		{"an earlier boot, holder killed before", HolderKilled, "a", "b", HolderKilled, said},
		{"this boot, no cause", Unknown, "a", "a", HolderKilled, said},
		{"this boot, stopped", Stopped, "a", "a", Stopped, said},
		{"this boot, shutdown cancelled too late", Shutdown, "a", "a", Shutdown, said},
		{"this boot, a restart already recorded", MachineRestarted, "a", "a", MachineRestarted, said},
		{"the session's boot unknown", Unknown, "", "b", Unknown, said},
		{"the machine's boot unknown", Shutdown, "a", "", Shutdown, said},
		{"both unknown, a restart recorded", MachineRestarted, "", "", MachineRestarted, said},
		{"a cause from the future, earlier boot", "eaten_by_grue", "a", "b", MachineRestarted, restarted},
		{"a cause from the future, this boot", "eaten_by_grue", "a", "a", HolderKilled, said},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cause, reason := InterruptedEnd(tc.reported, said, 42, tc.sessionBoot, tc.boot)
			if cause != tc.cause || reason != tc.reason {
				t.Errorf("InterruptedEnd(%q, %q, %q) = %q, %q; want %q, %q",
					tc.reported, tc.sessionBoot, tc.boot, cause, reason, tc.cause, tc.reason)
			}
		})
	}
	if RebootReason(HolderKilled, 1) != "" || RebootReason(Unknown, 1) != "" || RebootReason(Stopped, 1) != "" {
		t.Error("a cause that says nothing of the restart has a restart's reason")
	}
}

func TestNoticeRestart(t *testing.T) {
	for _, tc := range []struct {
		name              string
		recorded          Cause
		sessionBoot, boot string
		endedNow          bool
		want              RestartNotice
	}{
		// The first server of the boot: the restart is the cause.
		{"no cause yet", Unknown, "a", "b", false, RestartNotice{Set: MachineRestarted}},
		{"no cause yet, ended now", Unknown, "a", "b", true, RestartNotice{Set: MachineRestarted, Name: true}},
		{"stopped by the shutdown's SIGTERM", Stopped, "a", "b", false, RestartNotice{Set: MachineRestarted}},
		{"logind's shutdown keeps its cause", Shutdown, "a", "b", false, RestartNotice{Set: Shutdown}},
		{"logind's shutdown, ended now", Shutdown, "a", "b", true, RestartNotice{Set: Shutdown, Name: true}},
		// Told already, or not the restart's doing.
		{"told by an earlier server of this boot", MachineRestarted, "a", "b", false, RestartNotice{}},
		{"recorded as this server started", MachineRestarted, "a", "b", true, RestartNotice{Name: true}},
		{"holder killed before the restart", HolderKilled, "a", "b", true, RestartNotice{}},
		{"this boot", Unknown, "a", "a", true, RestartNotice{}},
		{"this boot, a restart recorded", MachineRestarted, "a", "a", true, RestartNotice{}},
		{"the session's boot unknown", Unknown, "", "b", true, RestartNotice{}},
		{"the machine's boot unknown", Stopped, "a", "", true, RestartNotice{}},
		// Hostile records.
		{"a cause from the future", "eaten_by_grue", "a", "b", false, RestartNotice{Set: MachineRestarted}},
		{"the case of a cause", "Shutdown", "a", "b", false, RestartNotice{Set: MachineRestarted}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NoticeRestart(tc.recorded, tc.sessionBoot, tc.boot, tc.endedNow); got != tc.want {
				t.Errorf("NoticeRestart(%q, %q, %q, %v) = %+v, want %+v",
					tc.recorded, tc.sessionBoot, tc.boot, tc.endedNow, got, tc.want)
			}
		})
	}
}
