// Package fgstate says what the foreground process group of a terminal is
// doing, as the kernel tells it: a program blocked reading the terminal
// (the next line typed is its answer), one blocked waiting on events with
// the terminal among them, or at work. Text on a screen cannot tell
// `sleep 30` from a question without a question mark; the system call a
// process sleeps in can.
//
// Classify is pure: it decides from what /proc says of each thread of the
// foreground group. Look (Linux) gathers that from /proc and the pty's
// ioctls; elsewhere it answers Unknown. Reading another process's
// /proc/PID/syscall takes the right to trace it: the holder, the ancestor
// of every process in its session, has it even under Yama's
// ptrace_scope=1.
package fgstate

// State is what the foreground group is doing.
type State uint8

const (
	// Unknown: nothing could be learned (not Linux, no foreground
	// group, an architecture without a table of system calls).
	Unknown State = iota
	// Running: a thread of the group runs, or sleeps in something that
	// is not waiting for the terminal (nanosleep, wait4, futex, a read
	// of a file or socket), or could not be looked at.
	Running
	// ReadingTerminal: a thread of the group is blocked in read on the
	// terminal: what is typed next is read by it.
	ReadingTerminal
	// WaitingOnEvents: every thread of the group is blocked, one of them
	// in poll, select or epoll in a process that holds the terminal open:
	// most likely waiting for a key among other events (an editor, a
	// pager, a REPL), though the terminal may not be among them.
	WaitingOnEvents
)

func (s State) String() string {
	switch s {
	case Running:
		return "running"
	case ReadingTerminal:
		return "reading_terminal"
	case WaitingOnEvents:
		return "waiting_on_events"
	}
	return "unknown"
}

// Call is the kind of system call a thread is blocked in.
type Call uint8

const (
	CallOther Call = iota // anything else: nanosleep, wait4, futex, …
	CallRead              // read, readv, pread64, preadv, preadv2
	CallPoll              // poll, ppoll, select, pselect6, epoll_wait, epoll_pwait, epoll_pwait2
)

// Task is one thread of a process in the foreground group, as /proc says.
type Task struct {
	Pid  int    // its process
	Comm string // its process's name
	// Running: on a CPU or runnable (/proc/…/syscall says "running"),
	// or its system call could not be read: nothing vouches it waits.
	Running bool
	Call    Call // what it is blocked in, when not Running
	// OnTerminal: Call's first argument is a descriptor of the terminal.
	OnTerminal bool
	// HoldsTerminal: its process has the terminal open.
	HoldsTerminal bool
}

// Facts is what Look learned.
type Facts struct {
	State State
	// Pgrp is the foreground process group (its leader's pid; 0:
	// unknown), LeaderComm its leader's name ("" when gone).
	Pgrp       int
	LeaderComm string
	// Pid and Comm are the process that decided State: the reader of the
	// terminal, the one waiting on events, else the leader.
	Pid  int
	Comm string
	// Shell: the foreground group is the session's program's own (its
	// process group): a shell with no job in the foreground.
	Shell bool
	// Unread is the bytes typed that the terminal's reader has not taken
	// (TIOCINQ on the terminal side; -1: unknown). In canonical mode the
	// kernel counts complete lines only: a half-typed line is not seen.
	Unread int
}

// Classify decides what a foreground group whose threads are tasks is
// doing, and which task decided it (nil with Unknown: no task).
func Classify(tasks []Task) (State, *Task) {
	if len(tasks) == 0 {
		return Unknown, nil
	}
	for i, t := range tasks {
		if !t.Running && t.Call == CallRead && t.OnTerminal {
			return ReadingTerminal, &tasks[i]
		}
	}
	var poller *Task
	for i, t := range tasks {
		if t.Running {
			return Running, &tasks[i]
		}
		if poller == nil && t.Call == CallPoll && t.HoldsTerminal {
			poller = &tasks[i]
		}
	}
	if poller != nil {
		return WaitingOnEvents, poller
	}
	return Running, &tasks[0]
}
