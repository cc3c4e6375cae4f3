package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Dialer runs the user's ssh to one host.
type Dialer struct {
	// Host is what ssh is given (Target.SSHHost); Name is how messages
	// name it (Target.Host).
	Host, Name string
	// SSH is the ssh command and its own arguments (TERMKEEP_SSH, split
	// at spaces; "ssh" when empty).
	SSH []string
	// Bin is the remote termkeep (TERMKEEP_REMOTE_BIN): "" looks for
	// termkeep on the remote PATH, then in ~/.local/bin.
	Bin string
	// Local and LocalMin are this termkeep's wire versions.
	Local, LocalMin int
}

// NewDialer returns the dialer of target t under environment getenv.
func NewDialer(t Target, getenv func(string) string, local, localMin int) *Dialer {
	ssh := strings.Fields(getenv("TERMKEEP_SSH"))
	if len(ssh) == 0 {
		ssh = []string{"ssh"}
	}
	return &Dialer{Host: t.SSHHost(), Name: t.Host, SSH: ssh, Bin: getenv("TERMKEEP_REMOTE_BIN"), Local: local, LocalMin: localMin}
}

// Dial is how a connection is made.
type Dial int

const (
	// DialFirst runs ssh as the user would: it may ask for a password
	// or a host key's confirmation, and share a master connection.
	DialFirst Dial = iota
	// DialAgain is a reconnect, which nobody may be there to answer:
	// ssh asks for nothing (batch mode).
	DialAgain
	// DialAsking is a reconnect that the user asked for, who answers
	// ssh's questions.
	DialAsking
)

// againOptions make a reconnect's ssh open a connection of its own (a
// master another ssh shares may be the one that died) and give up on a
// host that does not answer.
var againOptions = []string{"-o", "ControlMaster=no", "-o", "ControlPath=none", "-o", "ConnectTimeout=10"}

// argv is the ssh command line that runs the remote termkeep with args.
func (d *Dialer) argv(how Dial, args []string) []string {
	a := append([]string{}, d.SSH...)
	if how == DialAgain {
		a = append(a, "-o", "BatchMode=yes")
	}
	if how != DialFirst {
		a = append(a, againOptions...)
	}
	return append(a, "-T", "--", d.Host, remoteCommand(d.Bin, args))
}

// tried says where the remote command looks for termkeep.
func (d *Dialer) tried() string {
	if d.Bin != "" {
		return d.Bin
	}
	return "termkeep on the PATH, then ~/.local/bin/termkeep"
}

// remoteCommand is the command ssh hands the remote login shell: sh
// (whatever that shell is) runs the first termkeep it finds, or says it
// found none with the remote PATH, the PATH of a non-login ssh being
// short.
func remoteCommand(bin string, args []string) string {
	cands := `termkeep "$HOME/.local/bin/termkeep"`
	if bin != "" {
		cands = shellQuote(bin)
	}
	var q []string
	for _, a := range args {
		q = append(q, shellQuote(a))
	}
	script := `for t in ` + cands + `; do if command -v "$t" >/dev/null 2>&1; then exec "$t" ` + strings.Join(q, " ") +
		`; fi; done; echo "` + missingMark + ` PATH=$PATH" >&2; exit 127`
	return "sh -c " + shellQuote(script)
}

// shellQuote quotes s for a POSIX shell (and fish, which reads '\” the same).
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Relay runs ssh to the remote relay and returns the connection to the
// remote server, once the relay has said its versions and they match
// this termkeep's; how says whether ssh may ask questions. ctx bounds
// the dial only.
func (d *Dialer) Relay(ctx context.Context, how Dial) (*Conn, error) {
	args := []string{RelayArg}
	if how != DialFirst {
		args = append(args, "--"+AgainFlag)
	}
	c, err := d.start(how, args)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { c.r.SetReadDeadline(time.Unix(1, 0)) })
	v, err := readPreamble(c.r)
	stop()
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, errNoPreamble) {
			// ssh closed its output: its status and last words follow.
			select {
			case <-c.exited:
			case <-time.After(2 * time.Second):
			}
		}
		c.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, errNoPreamble) {
			return nil, &Error{Kind: KindRemote, Code: 1, Msg: fmt.Sprintf("what answered on %s is not termkeep's relay (%s)", d.Name, d.tried())}
		}
		return nil, c.failure(d)
	}
	if !v.Compatible(d.Local, d.LocalMin) {
		c.Close()
		return nil, versionError(d.Name, v, d.Local, d.LocalMin)
	}
	return c, nil
}

// Run runs the remote termkeep with args, its standard output copied to
// stdout; standard input is none. A failure is an *Error, its Code the
// remote termkeep's exit status; what the remote printed on standard
// error goes to stderr on success.
func (d *Dialer) Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var errb tailBuffer
	cmd := exec.CommandContext(ctx, d.SSH[0], d.argv(DialFirst, args)[1:]...)
	cmd.Stdout, cmd.Stderr = stdout, &errb
	// A master connection ssh leaves behind (ControlPersist) may hold
	// the standard error it inherited.
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		stderr.Write(errb.Bytes())
		return nil
	case errors.As(err, &ee):
		return failure(d.Name, ee.ExitCode(), errb.String(), d.tried())
	default:
		return d.noSSH(err)
	}
}

func (d *Dialer) noSSH(err error) *Error {
	return &Error{Kind: KindNoSSH, Code: 1, Msg: fmt.Sprintf("cannot run ssh (%s) to reach %s: %v (TERMKEEP_SSH names the ssh command)",
		strings.Join(d.SSH, " "), d.Name, errors.Unwrap(err))}
}

// start starts ssh running the remote termkeep with args, its standard
// input and output the connection's.
func (d *Dialer) start(how Dial, args []string) (*Conn, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	argv := d.argv(how, args)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	err = cmd.Start()
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, d.noSSH(err)
	}
	c := &Conn{r: outR, w: inW, cmd: cmd, exited: make(chan struct{}), errDone: make(chan struct{})}
	go func() {
		io.Copy(&c.stderr, errR)
		errR.Close()
		close(c.errDone)
	}()
	go func() {
		cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

// Conn is a connection to a remote server through ssh's standard input
// and output. Closing it ends ssh.
type Conn struct {
	r, w    *os.File // ssh's standard output and input
	cmd     *exec.Cmd
	exited  chan struct{} // closed once ssh is reaped
	errDone chan struct{} // closed once ssh's standard error ended
	stderr  tailBuffer
	once    sync.Once
}

var _ net.Conn = (*Conn)(nil)

func (c *Conn) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c *Conn) Write(p []byte) (int, error) { return c.w.Write(p) }

// Close closes ssh's pipes and ends ssh (SIGTERM, then SIGKILL after a
// second); it does not wait.
func (c *Conn) Close() error {
	c.once.Do(func() {
		c.w.Close()
		c.r.Close()
		c.cmd.Process.Signal(syscall.SIGTERM)
		go func() {
			select {
			case <-c.exited:
			case <-time.After(time.Second):
				c.cmd.Process.Kill()
			}
		}()
	})
	return nil
}

// failure says why ssh gave no preamble, once it was closed: it waits
// for ssh's end and its last words.
func (c *Conn) failure(d *Dialer) *Error {
	<-c.exited
	select {
	case <-c.errDone:
	case <-time.After(500 * time.Millisecond): // a master ssh left holds it
	}
	code := -1
	if st := c.cmd.ProcessState; st != nil {
		code = st.ExitCode()
	}
	return failure(d.Name, code, c.stderr.String(), d.tried())
}

// Exited is closed once ssh has ended.
func (c *Conn) Exited() <-chan struct{} { return c.exited }

func (c *Conn) LocalAddr() net.Addr  { return pipeAddr{} }
func (c *Conn) RemoteAddr() net.Addr { return pipeAddr{} }

func (c *Conn) SetDeadline(t time.Time) error {
	return errors.Join(c.r.SetReadDeadline(t), c.w.SetWriteDeadline(t))
}
func (c *Conn) SetReadDeadline(t time.Time) error  { return c.r.SetReadDeadline(t) }
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.w.SetWriteDeadline(t) }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "ssh" }
func (pipeAddr) String() string  { return "ssh" }

// tailBuffer keeps the last 8 KiB written to it: ssh's last words.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

const tailMax = 8 << 10

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > tailMax {
		b.buf = append(b.buf[:0], b.buf[len(b.buf)-tailMax:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf)
}

func (b *tailBuffer) String() string { return string(b.Bytes()) }
