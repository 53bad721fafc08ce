//go:build !unix

package oauth

import "io/fs"

// owned reports true: this platform has no Unix owner to check; the mode
// bits (on Windows, the read-only bit only) are all that is checked.
func (s *FileStore) owned(fs.FileInfo) bool { return true }

// noFollow is 0: the Lstat check before the open is what refuses a link.
const noFollow = 0
