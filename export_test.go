package purramcp

import "context"

// ResolveLimits exposes Limits.resolve to the external tests.
func ResolveLimits(l Limits) (Limits, error) { return l.resolve() }

// MapCallError exposes the request error mapping to the external tests.
func MapCallError(ctx, callCtx context.Context, err error) error {
	return mapCallError(ctx, callCtx, err)
}
