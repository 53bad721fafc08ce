//go:build !unix

package main

import "os/exec"

// setProcessGroup does nothing where process groups do not exist.
func setProcessGroup(*exec.Cmd) {}

// killProcessGroup ends cmd itself where process groups do not exist.
func killProcessGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
