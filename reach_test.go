package purramcp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

// reachPolicies are the columns of the reach table (README, docs/reach.md).
var reachPolicies = []purramcp.SchemaPolicy{
	{},
	{DialectEquivalence: true},
	{Annotations: true},
	{DialectEquivalence: true, Annotations: true},
	{ExtendedKeywords: true},
	{DialectEquivalence: true, Annotations: true, ExtendedKeywords: true},
}

// reachWant is, per captured catalog (testdata/catalogs, written by
// scripts/reach.sh), its tool count and its bindable tools under each of
// reachPolicies, as InspectTool measures them.
var reachWant = map[string][7]int{
	"agentdeskai__browser-tools-mcp":                   {14, 9, 14, 9, 14, 9, 14},
	"antv__mcp-server-chart":                           {27, 0, 0, 0, 26, 0, 27},
	"browsermcp__mcp":                                  {12, 0, 12, 0, 12, 0, 12},
	"chrome-devtools-mcp":                              {32, 25, 25, 28, 28, 26, 32},
	"circleci__mcp-server-circleci":                    {13, 0, 10, 0, 12, 0, 13},
	"cyanheads__git-mcp-server":                        {28, 2, 2, 21, 21, 2, 28},
	"exa-mcp-server":                                   {2, 0, 2, 0, 2, 0, 2},
	"executeautomation__playwright-mcp-server":         {33, 28, 28, 28, 28, 33, 33},
	"kimtaeyoon83__mcp-server-youtube-transcript":      {1, 0, 0, 1, 1, 0, 1},
	"mastra__mcp-docs-server":                          {9, 0, 8, 0, 9, 0, 9},
	"mcp-server-kubernetes":                            {23, 5, 5, 23, 23, 5, 23},
	"modelcontextprotocol__server-everything":          {13, 0, 7, 0, 13, 0, 13},
	"modelcontextprotocol__server-filesystem":          {14, 0, 10, 0, 14, 0, 14},
	"modelcontextprotocol__server-github":              {26, 0, 26, 0, 26, 0, 26},
	"modelcontextprotocol__server-memory":              {9, 0, 9, 0, 9, 0, 9},
	"modelcontextprotocol__server-postgres":            {1, 1, 1, 1, 1, 1, 1},
	"modelcontextprotocol__server-sequential-thinking": {1, 0, 1, 0, 1, 0, 1},
	"mongodb-mcp-server":                               {27, 11, 11, 14, 14, 17, 27},
	"notionhq__notion-mcp-server":                      {24, 0, 0, 0, 0, 0, 24},
	"openbnb__mcp-server-airbnb":                       {2, 2, 2, 2, 2, 2, 2},
	"pinecone-database__mcp":                           {9, 0, 5, 0, 6, 0, 9},
	"playwright__mcp":                                  {25, 21, 21, 24, 24, 22, 25},
	"shopify__dev-mcp":                                 {5, 0, 2, 0, 2, 0, 4},
	"task-master-ai":                                   {7, 0, 5, 0, 7, 0, 7},
	"upstash__context7-mcp":                            {2, 2, 2, 2, 2, 2, 2},
}

// TestReach_Catalogs: the bindable tools of the captured real-server
// catalogs, per policy, exactly; and the total under all three policies.
func TestReach_Catalogs(t *testing.T) {
	files, err := filepath.Glob("testdata/catalogs/*.json")
	require.NoError(t, err)
	require.Len(t, files, len(reachWant), "one row per captured catalog")
	var total [7]int
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		var saved struct {
			Tools []*mcp.Tool `json:"tools"` // decoded as a go-sdk client decodes tools/list
		}
		require.NoError(t, json.Unmarshal(raw, &saved), f)
		var got [7]int
		got[0] = len(saved.Tools)
		for i, policy := range reachPolicies {
			for _, tool := range saved.Tools {
				r, err := purramcp.InspectTool(tool, purramcp.Limits{}, policy)
				require.NoError(t, err)
				if r.Bindable {
					got[i+1]++
				}
			}
		}
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		assert.Equal(t, reachWant[name], got, name)
		for i := range got {
			total[i] += got[i]
		}
	}
	t.Logf("reach: %v", total)
	assert.GreaterOrEqual(t, total[6]*100, total[0]*95, "at least 95%% of all tools bind with all three policies")
}
