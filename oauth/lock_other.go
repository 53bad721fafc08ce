//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package oauth

import "context"

// Lock holds serverURL's entry. On this platform there is no flock(2):
// it holds nothing across processes, and only the in-process rule holds
// (each credential's refreshes in one keeper run one at a time, and a
// keeper re-reads the store and adopts a newer token before refreshing);
// processes that share a store may each refresh one credential.
func (s *FileStore) Lock(ctx context.Context, _ string) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return func() {}, nil
}
