package profile

import (
	"strings"

	"purra.dev/purramcp/internal/strictjson"
)

// paramHeaderKeyword is the schema extension of MCP 2026-07-28 (SEP-2243)
// naming the HTTP header a tools/call mirrors a parameter into
// (Mcp-Param-{name}); Options.ParamHeaders admits it.
const paramHeaderKeyword = "x-mcp-header"

// paramHeaders prepares a compile under Options.ParamHeaders: the root's
// property schemas as written are the only nodes x-mcp-header may stand
// in, and the root is the next node compiled.
func (c *compiler) paramHeaders(root *strictjson.Object) {
	c.headers, c.names, c.root = map[*strictjson.Object]bool{}, map[string]bool{}, true
	props, ok := root.Get("properties")
	if !ok {
		return
	}
	if obj, ok := props.(*strictjson.Object); ok {
		for _, v := range obj.Values {
			if p, ok := v.(*strictjson.Object); ok {
				c.headers[p] = true
			}
		}
	}
}

// paramHeader checks the x-mcp-header value v of the property being
// compiled, whose keywords are kw: a token no earlier property named
// (case-insensitively), on a property whose type is exactly one of
// string, integer and boolean.
func (c *compiler) paramHeader(v any, kw *keywordSlots) error {
	name, ok := v.(string)
	if !ok || !isToken(name) {
		return c.invalid(paramHeaderKeyword)
	}
	switch t, _ := kw.get(kwType); t {
	case "string", "integer", "boolean":
	default:
		return c.invalid(paramHeaderKeyword)
	}
	lower := strings.ToLower(name)
	if c.names[lower] {
		return c.invalid(paramHeaderKeyword)
	}
	c.names[lower] = true
	return nil
}

// isToken reports whether s is an HTTP field-name token (RFC 9110 5.6.2:
// 1*tchar).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch {
		case b >= '0' && b <= '9', b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z':
		case strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0:
		default:
			return false
		}
	}
	return true
}
