package purramcp

import "context"

// ResolveLimits exposes Limits.resolve to the external tests.
func ResolveLimits(l Limits) (Limits, error) { return l.resolve() }

// MapCallError exposes the request error mapping to the external tests.
func MapCallError(ctx, callCtx context.Context, err error) error {
	return mapCallError(ctx, callCtx, err)
}

// PageSize and ResultSize expose how discovery and Run count a tools/list
// page (and each tool's input and output schema) and a tools/call result,
// to check them against jssize.Size; each stops once its count passes limit.
var (
	PageSize   = pageSize
	ResultSize = resultSize
)
