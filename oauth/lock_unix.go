//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package oauth

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"

	"purra.dev/purramcp"
)

// lockPoll is how often Lock tries again for an entry another holder has.
const lockPoll = 10 * time.Millisecond

// Lock holds serverURL's entry against every other holder of a
// FileStore over the same Dir, in this process or another: an
// advisory flock(2) on the entry's own lock file (the credentials file's
// name with ".lock"), created 0600 and refused like a credentials file
// when it is not the user's own. It waits, bounded by ctx, while another
// holds it. The returned func releases it; the lock also ends with the
// process.
func (s *FileStore) Lock(ctx context.Context, serverURL string) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if os.MkdirAll(s.Dir, 0o700) != nil {
		return nil, authError(purramcp.CodeAuthStoreFailed)
	}
	if err := s.checkDir(); err != nil {
		return nil, storeFailure(err)
	}
	name := s.lockFile(serverURL)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, authError(purramcp.CodeAuthStoreFailed)
	}
	if fi, err := f.Stat(); err != nil || !private(fi, false) || !s.owned(fi) {
		_ = f.Close()
		return nil, &StoreError{Path: name}
	}
	var t *time.Timer
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close()
			return nil, authError(purramcp.CodeAuthStoreFailed)
		}
		if t == nil {
			t = time.NewTimer(lockPoll)
			defer t.Stop()
		} else {
			t.Reset(lockPoll)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, nil
}
