package fgstate

import (
	"testing"
)

func TestClassify(t *testing.T) {
	read := Task{Pid: 10, Comm: "rm", Call: CallRead, OnTerminal: true, HoldsTerminal: true}
	readPipe := Task{Pid: 11, Comm: "cat", Call: CallRead}
	poll := Task{Pid: 12, Comm: "vim", Call: CallPoll, HoldsTerminal: true}
	pollElse := Task{Pid: 13, Comm: "nc", Call: CallPoll}
	futex := Task{Pid: 12, Comm: "vim", Call: CallOther}
	run := Task{Pid: 14, Comm: "make", Running: true}
	sleep := Task{Pid: 15, Comm: "sleep", Call: CallOther, HoldsTerminal: true}
	for _, tc := range []struct {
		name  string
		tasks []Task
		want  State
		who   int
	}{
		{"no process", nil, Unknown, 0},
		{"rm -i reads the terminal", []Task{read}, ReadingTerminal, 10},
		{"a reader wins over a running pipe's other end", []Task{run, read}, ReadingTerminal, 10},
		{"cat reading a pipe", []Task{readPipe}, Running, 11},
		{"vim polls, its other threads blocked", []Task{poll, futex}, WaitingOnEvents, 12},
		{"a poller that does not hold the terminal", []Task{pollElse}, Running, 13},
		{"a poller with a running thread", []Task{poll, run}, Running, 14},
		{"sleep", []Task{sleep}, Running, 15},
		{"a process whose calls are unreadable", []Task{{Pid: 16, Running: true}}, Running, 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, who := Classify(tc.tasks)
			pid := 0
			if who != nil {
				pid = who.Pid
			}
			if got != tc.want || pid != tc.who {
				t.Errorf("Classify = %s by %d, want %s by %d", got, pid, tc.want, tc.who)
			}
		})
	}
}

func TestParseSyscall(t *testing.T) {
	for _, tc := range []struct {
		in      string
		running bool
		nr      int
		arg0    uint64
		ok      bool
	}{
		{"running\n", true, 0, 0, true},
		{"0 0x3 0x7ffd 0x1 0x0 0x0 0x0 0x7ffc 0x7f12\n", false, 0, 3, true},
		{"270 0x1 0x7ffd 0x0 0x0 0x0 0x0 0x7ffc 0x7f12\n", false, 270, 1, true},
		{"-1 0x7ffc 0x7f12\n", false, -1, 0, true},
		{"", false, 0, 0, false},
		{"x 0x1", false, 0, 0, false},
		{"0 3", false, 0, 0, false},
		{"-2 0x1", false, 0, 0, false},
		{"0", false, 0, 0, false},
	} {
		running, nr, arg0, ok := parseSyscall([]byte(tc.in))
		if running != tc.running || nr != tc.nr || arg0 != tc.arg0 || ok != tc.ok {
			t.Errorf("parseSyscall(%q) = %v %d %d %v", tc.in, running, nr, arg0, ok)
		}
	}
}

func TestStatFields(t *testing.T) {
	for _, tc := range []struct {
		in    string
		comm  string
		state byte
		pgrp  int
		ok    bool
	}{
		{"123 (rm) S 100 123 100 34816 123 4194304", "rm", 'S', 123, true},
		{"7 (a (b) c) R 1 9 9 0 -1", "a (b) c", 'R', 9, true},
		{"7 (x) S 1", "", 0, 0, false},
		{"7 x S 1 2", "", 0, 0, false},
		{"7 (x) SS 1 2 3", "", 0, 0, false},
	} {
		comm, state, pgrp, ok := statFields([]byte(tc.in))
		if string(comm) != tc.comm || state != tc.state || pgrp != tc.pgrp || ok != tc.ok {
			t.Errorf("statFields(%q) = %q %c %d %v", tc.in, comm, state, pgrp, ok)
		}
	}
}
