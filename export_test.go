package purramcp

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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

// PageCost exposes discovery's per-page count and size checks.
var PageCost = pageCost

// ConvertResult runs Run's result conversion for a text-only tool (no
// output schema) under limits, to measure what it costs on a decoded result.
func ConvertResult(limits Limits, result *mcp.CallToolResult) (Envelope, error) {
	lim, err := limits.resolve()
	if err != nil {
		return Envelope{}, err
	}
	envelope, err := newRemoteContract(map[string]any{"type": "object"}, lim, SchemaPolicy{}.profile())
	if err != nil {
		return Envelope{}, err
	}
	return (&boundTool{limits: lim, envelope: envelope}).convert(result)
}

// ValidateWithMember exposes the envelope validation of Run's results:
// outer over value, then inner over value[name], in one walk that may keep
// value's containers.
func ValidateWithMember(outer *Contract, value map[string]any, name string, inner *Contract) (map[string]any, error) {
	return outer.validateWithMember(value, name, inner)
}
