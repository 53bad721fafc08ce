package fleet

import (
	"maps"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"
)

// process is a stdio server's child, the leader of its own process group
// where the platform has them, and the parent's ends of its three pipes.
type process struct {
	cmd    *exec.Cmd
	stdin  *os.File      // written by the session
	stdout *os.File      // read by the session
	stderr *os.File      // read into the server's stderr ring
	exited chan struct{} // closed once the leader has exited and been reaped
	copied chan struct{} // closed once stderr is drained
	once   sync.Once
}

// startProcess starts sc.Command with sc.Args, the host's environment plus
// sc.Env, and sc.Cwd, in a process group of its own, its standard error
// copied into ring. The pipes are plain files so that exec starts no
// goroutine of its own and a grandchild holding a pipe open cannot hold
// back Wait.
func startProcess(sc ServerConfig, ring *stderrRing) (*process, error) {
	cmd := exec.Command(sc.Command, sc.Args...)
	cmd.Dir = sc.Cwd
	cmd.Env = os.Environ()
	for _, k := range slices.Sorted(maps.Keys(sc.Env)) {
		cmd.Env = append(cmd.Env, k+"="+sc.Env[k])
	}
	var files [6]*os.File // child stdin, our stdin end, our stdout end, child stdout, ours, child stderr
	var err error
	for i := 0; i < 6 && err == nil; i += 2 {
		files[i], files[i+1], err = os.Pipe()
	}
	closeAll := func(fs ...*os.File) {
		for _, f := range fs {
			if f != nil {
				_ = f.Close()
			}
		}
	}
	if err != nil {
		closeAll(files[:]...)
		return nil, err
	}
	inR, inW, outR, outW, errR, errW := files[0], files[1], files[2], files[3], files[4], files[5]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	ownGroup(cmd)
	err = cmd.Start()
	closeAll(inR, outW, errW) // the child has its copies
	if err != nil {
		closeAll(inW, outR, errR)
		return nil, err
	}
	p := &process{cmd: cmd, stdin: inW, stdout: outR, stderr: errR, exited: make(chan struct{}),
		copied: make(chan struct{})}
	go func() { // ends when the leader exits; stop makes sure it does
		_ = cmd.Wait()
		close(p.exited)
	}()
	go func() { // ends when stop closes errR, if not before
		ring.readFrom(errR)
		close(p.copied)
	}()
	return p, nil
}

// stop ends the whole process group, as MCP's stdio shutdown asks: close
// the child's standard input and wait, then SIGTERM (with SIGCONT, so a
// stopped group sees it), wait, then SIGKILL; what is left of the group
// once the leader is gone is killed too. The stderr copy then reads to the
// end of what the group wrote (end of file, once every writer is gone),
// for at most stderrGrace: a writer that escaped the group is cut off. It
// returns within closeGrace + termGrace + killGrace + stderrGrace, with the
// pipes closed and the stderr copy ended.
// It is idempotent.
func (p *process) stop() {
	p.once.Do(func() {
		_ = p.stdin.Close()
		if !p.wait(closeGrace) {
			p.signalGroup(sigTerm)
			if !p.wait(termGrace) {
				p.signalGroup(sigKill)
				p.wait(killGrace)
			}
		}
		p.signalGroup(sigKill) // a grandchild that outlived its parent
		_ = p.stdout.Close()
		t := time.NewTimer(stderrGrace)
		select {
		case <-p.copied:
		case <-t.C:
		}
		t.Stop()
		_ = p.stderr.Close()
		<-p.copied
	})
}

// wait reports whether the leader exited within d.
func (p *process) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// exitCode returns the leader's exit status once it has exited and been
// reaped, -1 before or when a signal ended it.
func (p *process) exitCode() int {
	select {
	case <-p.exited:
		return p.cmd.ProcessState.ExitCode()
	default:
		return -1
	}
}
