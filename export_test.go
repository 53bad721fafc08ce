package purramcp

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp/internal/bounding"
	"purra.dev/purramcp/internal/profile"
	"purra.dev/purramcp/internal/strictjson"
	"purra.dev/purramcp/internal/wire"
)

// ResolveLimits exposes Limits.resolve to the external tests.
func ResolveLimits(l Limits) (Limits, error) { return l.resolve() }

// MapCallError exposes the request error mapping to the external tests.
func MapCallError(ctx, callCtx context.Context, err error) error {
	return publicError(bounding.MapError(ctx, callCtx, err))
}

// PageSize and ResultSize expose how discovery and Run count a tools/list
// page (and each tool's input and output schema) and a tools/call result,
// to check them against jssize.Size; each stops once its count passes limit.
var (
	PageSize   = wire.PageSize
	ResultSize = wire.ResultSize
)

// PageCost exposes discovery's per-page count and size checks.
var PageCost = pageCost

// ConvertResult runs Run's result conversion for a text-only tool (no
// output schema) under limits, to measure what it costs on a decoded result.
func ConvertResult(limits Limits, result *mcp.CallToolResult) (Envelope, error) {
	return ConvertResultWith(limits, nil, result, false)
}

// ConvertResultWith runs Run's result conversion for a tool whose output
// schema is output (nil: none) under limits. With exact, it runs the
// conversion as it was before the size bound (wire.SizeWithin): the exact
// count first, then the block checks and the envelope's own walk.
func ConvertResultWith(limits Limits, output map[string]any, result *mcp.CallToolResult, exact bool) (Envelope, error) {
	lim, err := limits.resolve()
	if err != nil {
		return Envelope{}, err
	}
	envelope, err := newRemoteContract(map[string]any{"type": "object"}, lim, SchemaPolicy{}.profile())
	if err != nil {
		return Envelope{}, err
	}
	t := &catalogTool{limits: lim, envelope: envelope}
	if output != nil {
		if t.output, err = newRemoteContract(output, lim, SchemaPolicy{}.profile()); err != nil {
			return Envelope{}, err
		}
	}
	if exact {
		return t.convertExact(result)
	}
	return t.convert(result)
}

// convertExact is convert without the size bound.
func (t *catalogTool) convertExact(result *mcp.CallToolResult) (Envelope, error) {
	if result.IsError {
		return Envelope{}, fail(CodeToolError)
	}
	if len(result.Content) > t.limits.MaxContentBlocks {
		return Envelope{}, fail(CodeResultTooLarge)
	}
	if n, err := wire.ResultSize(result, t.limits.MaxResultBytes); err != nil {
		return Envelope{}, fail(CodeResultInvalid)
	} else if n > t.limits.MaxResultBytes {
		return Envelope{}, fail(CodeResultTooLarge)
	}
	text, ok := textBlocks(result.Content)
	if !ok {
		return Envelope{}, fail(CodeResultUnsupported)
	}
	if result.NeedsInput() || result.InputRequests != nil {
		return Envelope{}, fail(CodeResultUnsupported)
	}
	return t.envelopeOf(text, result.StructuredContent)
}

// SizeBoundHolds reports whether the size bound of a text-and-structured
// result, measured by the envelope's walk under generous limits, claims a
// size at most limit; walked is false when that walk failed.
func SizeBoundHolds(result *mcp.CallToolResult, limit int) (holds, walked bool) {
	text, ok := textBlocks(result.Content)
	if !ok {
		return false, false
	}
	envelope, ok := envelopeValue(text, result.StructuredContent)
	if !ok {
		return false, false
	}
	_, m, err := strictjson.Shared(envelope, strictjson.Limits{Depth: 1 << 10, Nodes: 1 << 24, Bytes: 1 << 30})
	if err != nil {
		return false, false
	}
	return wire.SizeWithin(result, m, limit), true
}

// ValidateWithMember exposes the envelope validation of Run's results:
// outer over value, then inner over value["structured"], in one walk that
// may keep value's containers.
func ValidateWithMember(outer *Contract, value map[string]any, inner *Contract) (map[string]any, error) {
	return resultValidator{envelope: outer, output: inner}.validate(value)
}

// NewExtendedContract is NewContract with the profile widened as
// SchemaPolicy.ExtendedKeywords widens it, for the differential tests.
func NewExtendedContract(opts ContractOptions) (*Contract, error) {
	c, err := newContract(opts, profile.Options{ExtendedKeywords: true})
	if err != nil {
		return nil, err.ContractError
	}
	return c, nil
}

// AcceptProtocolVersion, OnNotification and Close expose to the external
// tests what Attach, a list change the monitor's client receives and the
// session's end do to a monitor.
func (m *CatalogMonitor) AcceptProtocolVersion(version string) error {
	return m.acceptProtocolVersion(version)
}

// OnNotification: see AcceptProtocolVersion.
func (m *CatalogMonitor) OnNotification(method string) { m.onNotification(method) }

// Close: see AcceptProtocolVersion.
func (m *CatalogMonitor) Close() { m.close() }

// ClientOptionsOf exposes the options m.NewClient builds its client with.
func ClientOptionsOf(m *CatalogMonitor, base *mcp.ClientOptions) *mcp.ClientOptions {
	return m.clientOptions(base)
}
