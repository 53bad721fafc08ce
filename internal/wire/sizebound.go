package wire

import (
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp/internal/strictjson"
)

// SizeWithin reports whether ResultSize(result) <= limit follows from a
// bound, without counting all of it: result holds only text blocks (without
// _meta or annotations), structured content and _meta, and m is what the
// envelope's walk measured of {text, structured}, which holds every text and
// the structured content. _meta is walked apart, the same way. It
// reports false, and the exact count decides, whenever result carries
// anything else or the bound passes limit.
//
// The bound. ResultSize is the JSON.stringify length of
//
//	{"_meta":M,"content":[{"type":"text","text":T1},...],"structuredContent":S,"resultType":R}
//
// which is at most 50 + 24k + ΣSC(Ti) + |S| + SC(R) + [9 + |M|] for k
// blocks, SC being a string literal's length (strictjson.StringCost,
// "content":null adding two bytes when content is absent). A walk's detached bytes bound a value's
// JSON.stringify length but for numbers: a number costs 24 and JS spells one
// in at most 25 characters (-0.0000012345678901234567), while every other
// scalar, each member separator and each element separator costs at least
// what it is written in, so |S| <= bytes(S) + nodes(S). The walk counted
// every Ti and S once, so ΣSC(Ti) + |S| <= m.Bytes + m.Nodes, and |M| is
// bounded by its own walk likewise.
func SizeWithin(result *mcp.CallToolResult, m strictjson.Measure, limit int) bool {
	if result.RequestState != "" || result.InputRequests != nil || result.IsError {
		return false
	}
	for _, block := range result.Content {
		if tc, ok := block.(*mcp.TextContent); !ok || tc == nil || tc.Meta != nil || tc.Annotations != nil {
			return false
		}
	}
	resultType := resultTypeOf(result)
	if !utf8.ValidString(resultType) || len(resultType) > limit {
		return false
	}
	bound := 64 + 25*len(result.Content) + m.Bytes + m.Nodes + strictjson.StringCost(resultType)
	if bound > limit {
		return false
	}
	if len(result.Meta) != 0 { // go-sdk servers send their serverInfo there
		mm, err := strictjson.MeasureOf(map[string]any(result.Meta), strictjson.Limits{Depth: metaDepth,
			Nodes: limit - bound, Bytes: limit - bound})
		if err != nil {
			return false // deeper, larger or outside the domain: the exact count decides
		}
		bound += len(`"_meta":,`) + mm.Bytes + mm.Nodes
	}
	return bound <= limit
}

// metaDepth is how deep a result's _meta may nest for the bound to cover it.
const metaDepth = 32
