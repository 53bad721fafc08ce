//go:build unix

package oauth

import (
	"io/fs"
	"os"
	"syscall"
)

// owned reports whether fi belongs to the effective user.
func (s *FileStore) owned(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && uint64(st.Uid) == uint64(os.Geteuid())
}

// noFollow makes opening a symbolic link fail.
const noFollow = syscall.O_NOFOLLOW
