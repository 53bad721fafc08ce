//go:build !unix

package fleet

import "os/exec"

// signal is what stop asks for: termination or a kill. Without process
// groups both kill the child itself.
type signal int

// Signals stop sends.
const (
	sigTerm signal = iota
	sigKill
)

// ownGroup does nothing: the platform has no process groups exec can set.
func ownGroup(*exec.Cmd) {}

// signalGroup kills the child; its own children are not reached here.
func (p *process) signalGroup(signal) { _ = p.cmd.Process.Kill() }
