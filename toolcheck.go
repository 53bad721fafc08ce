package purramcp

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp/internal/strictjson"
)

// A toolFault says why a listed tool cannot be bound: the code discovery
// fails with and, for a schema, which one ("inputSchema" or
// "outputSchema"), the path of the failing node and the keyword or limit.
type toolFault struct{ code, schema, path, keyword string }

// checkedTool is what checkTool compiles for a tool that binds.
type checkedTool struct {
	input, output         *Contract // output nil when the tool has none
	inputSnap, outputSnap *strictjson.Object
}

// checkTool applies discovery's rules for one listed tool, in order: its
// description within MaxDescriptionBytes, then its input and its output
// schema under limits and policy. sizes are the schemas' compact JSON sizes,
// measured once by the caller (a negative size: the schema could not be
// measured). Discovery and the inspector both call it, so they cannot
// disagree on a tool or its order of checks. execution.taskSupport
// "required" would fail mcp_tool_unsupported here, but go-sdk v1.8.0 drops
// it while decoding. cache is the monitor's schema cache (nil: none, as for
// the inspector); it changes no outcome.
func checkTool(tool *mcp.Tool, sizes [2]int, lim Limits, policy SchemaPolicy, cache *schemaCache) (checkedTool, *toolFault) {
	var c checkedTool
	if jsUTF8Len(tool.Description) > lim.MaxDescriptionBytes {
		return c, &toolFault{code: CodeCatalogLimitExceeded, path: "$", keyword: "MaxDescriptionBytes"}
	}
	var err error
	if c.input, c.inputSnap, err = checkSchema(tool.InputSchema, sizes[0], lim, policy, cache); err != nil {
		return c, schemaToolFault("inputSchema", err)
	}
	if tool.OutputSchema != nil {
		if c.output, c.outputSnap, err = checkSchema(tool.OutputSchema, sizes[1], lim, policy, cache); err != nil {
			return c, schemaToolFault("outputSchema", err)
		}
	}
	return c, nil
}

// checkSchema is sizedRemoteContract for a schema whose size may not have
// been measurable (size < 0).
func checkSchema(schema any, size int, lim Limits, policy SchemaPolicy, cache *schemaCache) (*Contract, *strictjson.Object, error) {
	if size < 0 {
		return nil, nil, &schemaFault{"$", "schema"}
	}
	return cache.remoteContract(schema, size, lim, policy)
}

// schemaToolFault locates a remote-schema fault of the named schema.
func schemaToolFault(which string, err error) *toolFault {
	f := err.(*schemaFault) // sizedRemoteContract fails only with a fault
	return &toolFault{code: CodeSchemaUnsupported, schema: which, path: f.path, keyword: f.keyword}
}
