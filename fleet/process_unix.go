//go:build unix

package fleet

import (
	"os/exec"
	"syscall"
)

// Signals stop sends.
const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// ownGroup makes the child the leader of a new process group, so that
// signals reach every process it starts (sh, npx, node alike).
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// signalGroup sends sig to the child's whole process group; SIGTERM is
// followed by SIGCONT, so that a stopped group wakes up to handle it.
func (p *process) signalGroup(sig syscall.Signal) {
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, sig)
	if sig == syscall.SIGTERM {
		_ = syscall.Kill(-pgid, syscall.SIGCONT)
	}
}
