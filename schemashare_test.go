package purramcp_test

import (
	"context"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// TestSchemaSharing_ConcurrentDiscoveries: discoveries running at once over
// one session share its schema cache (and so the snapshot objects and
// compiled nodes it shares between schemas) and all return the catalog a
// discovery alone returns, on the distinct catalog and on the one whose
// tools share nothing; under -race this checks the sharing's locking.
func TestSchemaSharing_ConcurrentDiscoveries(t *testing.T) {
	leakChecked(t, "discoveries", func(t *testing.T) {
		for _, build := range []func() (*mcp.Server, map[string]purramcp.ToolBinding){distinctCatalog, uniqueLeavesCatalog} {
			server, bindings := build()
			want := interleaveDigest(t, benchWorkload(server, bindings))
			cs, monitor, closeSession, err := interleaveConnect(server, "", true)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			digests := make([]string, 4)
			errs := make([]error, 4)
			for i := range digests {
				wg.Add(1)
				go func() {
					defer wg.Done()
					catalog, err := purramcp.DiscoverTools(context.Background(), cs, "bench", bindings,
						purramcp.DiscoveryOptions{Monitor: monitor})
					if err == nil {
						digests[i] = catalog.Snapshot().RevisionDigest
					}
					errs[i] = err
				}()
			}
			wg.Wait()
			closeSession()
			for i := range digests {
				if errs[i] != nil || digests[i] != want {
					t.Fatalf("discovery %d: digest %s, %v; want %s", i, digests[i], errs[i], want)
				}
			}
		}
	})
}
