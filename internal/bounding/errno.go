//go:build !plan9

package bounding

import (
	"errors"
	"syscall"
)

// brokenErrno reports the system errors that mean a connection is gone: a
// write to a closed pipe or socket, a reset, a refused connect.
func brokenErrno(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNREFUSED)
}
