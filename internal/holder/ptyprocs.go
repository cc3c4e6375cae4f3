package holder

// The processes of the session's terminal: the child may leave processes
// behind that hold the pty (a job run with `trap '' HUP`, a daemon that
// called setsid but kept its standard streams). The holder reads their
// output while they do (drainOver), and a close ends them all, not only
// the child's process group and the terminal's foreground group.
